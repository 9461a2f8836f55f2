"""tensorlib.distributed across processes: jobs of 2 and 4 ranks started by the launcher
(tensorlib-run) run rank_checks.py (collectives against numpy, async work, object
collectives, sub-groups, DistributedDataParallel against single-process training), and
failing jobs end non-zero long before their timeout. Each job start costs seconds, so the
checks are grouped into one rank script per world size."""
import os
import shutil
import sys

import pytest

from tensorlib.distributed.run import find_mpiexec

from tests.distributed.launching import launch

pytest.importorskip("mpi4py", reason="multi-process tests need mpi4py: "
                                     "pip install \"tensorlib[distributed]\"")
if find_mpiexec("mpiexec")[0] is None:
    pytest.skip("multi-process tests need mpiexec beside this Python or on PATH (the mpich "
                "wheel brings it)", allow_module_level=True)

CHECKS = ["all_reduce", "broadcast_reduce", "all_gather", "reduce_scatter",
          "gather_scatter", "all_to_all", "p2p", "async", "objects", "subgroups",
          "ddp_broadcast", "ddp_gradients", "ddp_no_sync", "ddp_training", "ddp_find_unused",
          "sampler", "zero"]


def test_unactivated_environment_finds_its_mpiexec(tmp_path):
    """The interpreter called by path, its environment's bin/ off PATH: the launcher still
    finds the mpiexec the mpich wheel put beside it (issue #30)."""
    env_bins = {os.path.dirname(sys.executable), os.path.join(sys.prefix, "bin")}
    if not any(shutil.which("mpiexec", path=d) for d in env_bins):
        pytest.skip("mpiexec is not in this Python's environment (pip install mpich)")
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and os.path.normpath(d) not in map(os.path.normpath, env_bins))
    script = tmp_path / "ranks.py"
    # each rank writes a file: their stdout lines may interleave
    script.write_text("import os, sys\nopen(os.path.join(sys.argv[1], 'rank' + os.environ['RANK']),"
                      " 'w').write(os.environ['WORLD_SIZE'])\n")
    done = launch(2, str(script), str(tmp_path), path=path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert [(tmp_path / f"rank{r}").read_text() for r in range(2)] == ["2", "2"]


@pytest.mark.parametrize("nproc,backend", [(2, "gloo"), (4, "mpi")])
def test_rank_checks(nproc, backend, monkeypatch):
    monkeypatch.setenv("CHECK_BACKEND", backend)
    done = launch(nproc, "rank_checks.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    for rank in range(nproc):
        assert f"RANK {rank} DONE;" in done.stdout
        for check in CHECKS:
            assert f"CHECK {check} rank {rank};" in done.stdout, (check, rank)


def test_raising_rank_ends_the_job():
    # the process group's timeout is 600 s; the job must end at once (the launch's limit)
    done = launch(2, "failing_rank.py", "raise", timeout=150)
    assert done.returncode != 0
    assert "rank 1 raised ValueError" in done.stderr
    assert "rank 1 fails on purpose" in done.stderr
    assert "unreachable" not in done.stdout
    assert "tensorlib-run: the job failed" in done.stderr


def test_collective_times_out_and_ends_the_job():
    done = launch(2, "failing_rank.py", "hang", timeout=150)
    assert done.returncode != 0
    assert "rank 0 raised DistBackendError" in done.stderr
    assert "rank 0: all_reduce" in done.stderr and "timed out after 2 s" in done.stderr
    assert "unreachable" not in done.stdout
