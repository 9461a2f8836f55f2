"""The launcher's command line (torchrun's flags) and the mpiexec command it builds; the
jobs it starts are tested in test_multiprocess.py."""
import os
import sys

import pytest

from tensorlib.distributed import run


def test_torchrun_flags_and_command():
    args = run.parse_args(["--nproc_per_node", "3", "--master-addr", "10.0.0.1",
                           "--master_port", "1234", "--max-restarts", "0", "train.py", "--lr",
                           "0.1"])
    assert (args.nproc_per_node, args.nnodes, args.master_addr, args.master_port) == \
        (3, 1, "10.0.0.1", 1234)
    cmd = run.mpiexec_command(args, "/usr/bin/mpiexec")
    assert cmd[:3] == ["/usr/bin/mpiexec", "-n", "3"]
    assert cmd[3:] == [sys.executable, "-u", "-m", "tensorlib.distributed._rank", "train.py",
                       "--lr", "0.1"]
    env = run._environment(args)
    assert env["MASTER_ADDR"] == "10.0.0.1" and env["MASTER_PORT"] == "1234"
    assert env["TORCHELASTIC_RUN_ID"]


def test_several_nodes_and_modules():
    args = run.parse_args(["--nnodes", "2", "--nproc-per-node", "4", "--node-rank", "0",
                           "--hosts", "a,b", "-m", "pkg.train"])
    cmd = run.mpiexec_command(args, "mpiexec")
    assert cmd[:7] == ["mpiexec", "-n", "8", "-ppn", "4", "-hosts", "a,b"]
    assert cmd[-3:] == ["tensorlib.distributed._rank", "-m", "pkg.train"]
    assert run.main(["--nnodes", "2", "--node-rank", "1", "train.py"]) == 0


def test_standalone_picks_a_port():
    args = run.parse_args(["--standalone", "--nproc-per-node", "2", "t.py"])
    assert args.nnodes == 1 and args.master_addr == "127.0.0.1" and args.master_port > 0


@pytest.mark.parametrize("argv", [["--max-restarts", "3", "t.py"],
                                  ["--nnodes", "1:4", "t.py"],
                                  ["--nproc-per-node", "0", "t.py"]])
def test_unsupported_flags(argv, capsys):
    with pytest.raises(SystemExit):
        run.parse_args(argv)
    assert "error" in capsys.readouterr().err


def test_missing_mpiexec(capsys):
    assert run.main(["--mpiexec", "no-such-mpiexec", "t.py"]) == 2
    err = capsys.readouterr().err
    assert "pip install" in err
    assert os.path.dirname(sys.executable) in err and "PATH" in err   # where it looked
