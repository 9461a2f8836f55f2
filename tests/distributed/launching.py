"""Starting a test job: the launcher (tensorlib-run) runs a rank script of this folder in
`nproc` processes, with this checkout's packages on their path."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def launch(nproc, script, *args, timeout=90, path=None):
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    paths = [ROOT] + [os.path.join(ROOT, "backends", b) for b in ("cpu", "opencl", "cuda")]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "tensorlib.distributed.run", "--nproc-per-node", str(nproc),
           os.path.join(HERE, script), *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
