"""`tensorlib.torch_compat`: `import torch` resolving to tensorlib. Each case runs in its own
interpreter, since installing the mapping changes the process (and the real torch, where
installed, is the oracle of other tests)."""
import os
import subprocess
import sys
import textwrap

import pytest

from tensorlib.torch_compat.version import TorchVersion


def run_program(tmp_path, source, *args, cli=("-m", "tensorlib.torch_compat"), env=None):
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(source))
    proc = subprocess.run([sys.executable, *cli, str(program), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **(env or {})))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_torch_and_its_submodules_are_tensorlibs(tmp_path):
    out = run_program(tmp_path, """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.utils.data
        from torch.optim.lr_scheduler import StepLR
        import tensorlib
        assert torch.Tensor is tensorlib.Tensor and nn is tensorlib.nn
        assert F is tensorlib.nn.functional
        assert torch.utils.data.DataLoader is tensorlib.utils.data.DataLoader
        assert StepLR is tensorlib.optim.lr_scheduler.StepLR
        assert tensorlib.nn.functional.__spec__.name == "tensorlib.nn.functional"
        assert torch.torch is torch and torch.torch.zeros is tensorlib.zeros
        from torch.quasirandom import SobolEngine
        assert SobolEngine is torch.quasirandom.SobolEngine is tensorlib.quasirandom.SobolEngine
        x = torch.ones(2, 3)
        print(tuple(nn.Linear(3, 1)(x).shape) == (2, 1), torch.float32 is tensorlib.float32)
    """)
    assert out.split() == ["True", "True"]


def test_names_print_as_pytorchs_under_the_alias(tmp_path):
    """Programs print shapes and dtypes and compare them with text (a distribution's repr
    against "... torch.Size([5, 2, 3])"): under the alias they read as PyTorch's."""
    out = run_program(tmp_path, """
        import torch
        x = torch.zeros(5, 2, dtype=torch.float64)
        print(x.shape, x.dtype, x.type(), x.layout, torch.channels_last, [torch.int64])
        print(torch.zeros(2, dtype=torch.int32).type() == "torch.IntTensor")
    """)
    assert out.splitlines() == [
        "torch.Size([5, 2]) torch.float64 torch.DoubleTensor torch.strided torch.channels_last "
        "[torch.int64]", "True"]


def test_versions_answer_as_pytorch_2_while_tensorlib_keeps_its_own(tmp_path):
    out = run_program(tmp_path, """
        import importlib.metadata
        before_import = importlib.metadata.version("torch")
        import torch
        import tensorlib
        print(before_import, importlib.metadata.version("torch"), torch.__version__,
              torch.version.__version__, torch.version.cuda, tensorlib.__version__,
              torch.__version__ >= "2.0", torch.__version__ >= (2, 0), torch.__version__ < "2")
    """)
    meta, meta_after, version, version_module, cuda, ours, ge_str, ge_tuple, lt = out.split()
    assert meta == meta_after == version == version_module
    assert version.startswith("2.") and ours != version
    assert cuda == "None" and ge_str == ge_tuple == "True" and lt == "False"


def test_attribute_writes_reach_tensorlib(tmp_path):
    out = run_program(tmp_path, """
        import torch, tensorlib
        torch.patched_by_a_library = 7
        print(tensorlib.patched_by_a_library, "patched_by_a_library" in dir(torch))
        from torch import *
        print(tensor([1, 2]).tolist())
    """)
    assert out.split() == ["7", "True", "[1,", "2]"]


def test_names_read_once_follow_later_writes_on_either_module(tmp_path):
    """torch keeps a name it has read (torch.cat is then a dict lookup); a write or delete
    through torch or on tensorlib itself (monkeypatching) is what the next read sees."""
    out = run_program(tmp_path, """
        import torch, tensorlib
        real = torch.cat
        print(torch.cat is tensorlib.cat, "cat" in vars(torch))
        tensorlib.cat = lambda *a, **k: "patched"
        print(torch.cat())
        torch.cat = real
        print(tensorlib.cat is real, torch.cat is real)
        tensorlib.extra_name = 1
        print(torch.extra_name)
        del tensorlib.extra_name
        print(hasattr(torch, "extra_name"))
        torch.other = 2
        del torch.other
        print(hasattr(tensorlib, "other"), hasattr(torch, "other"), torch.__name__)
    """)
    assert out.split() == ["True", "True", "patched", "True", "True", "1", "False", "False",
                           "False", "torch"]


def test_missing_submodule_names_the_torch_path(tmp_path):
    out = run_program(tmp_path, """
        try:
            import torch._not_a_torch_module.inner
        except ModuleNotFoundError as error:
            print(error.name)
            print(error)
    """)
    name, message = out.splitlines()[:2]
    assert name == "torch._not_a_torch_module"
    assert "not provided by tensorlib" in message and "torch._not_a_torch_module" in message


def test_functorch_is_torch_funcs_api(tmp_path):
    out = run_program(tmp_path, """
        import functorch
        from functorch import make_functional, vmap, grad
        import tensorlib
        assert vmap is tensorlib.func.vmap and grad is tensorlib.func.grad
        fmodel, params = make_functional(tensorlib.nn.Linear(2, 1))
        print(functorch.__version__.startswith("2."), len(params))
        try:
            import functorch.not_provided
        except ModuleNotFoundError as error:
            print(error.name)
    """)
    assert out.split() == ["True", "2", "functorch.not_provided"]


def test_program_arguments_and_argv_pass_through(tmp_path):
    out = run_program(tmp_path, """
        import sys, os
        import torch
        print(sys.argv[1:], os.path.basename(sys.argv[0]), os.path.basename(sys.path[0]))
    """, "--lr", "0.1", "-m", "x", cli=("-m", "tensorlib", "run-torch"))
    assert out.strip() == f"['--lr', '0.1', '-m', 'x'] program.py {tmp_path.name}"


def test_module_mode(tmp_path):
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "__main__.py").write_text(
        "import sys, torch, tensorlib\nprint(torch.zeros(1).__class__ is tensorlib.Tensor, "
        "sys.argv[1:])\n")
    proc = subprocess.run([sys.executable, "-m", "tensorlib.torch_compat", "-m", "mypkg", "-x", "a"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True ['-x', 'a']"


def test_refuses_when_another_torch_is_imported(tmp_path):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys, types
        sys.modules["torch"] = types.ModuleType("torch")   # stands for the real PyTorch
        from tensorlib.torch_compat import install
        try:
            install()
        except RuntimeError as error:
            print(error)
    """)], capture_output=True, text=True, timeout=300)
    assert "already imported" in proc.stdout, proc.stdout + proc.stderr


def test_refuses_after_real_pytorch(tmp_path):
    pytest.importorskip("torch")
    proc = subprocess.run([sys.executable, "-c", "import torch\nfrom tensorlib.torch_compat "
                           "import install\ntry:\n    install()\nexcept RuntimeError as e:\n"
                           "    print(e)"], capture_output=True, text=True, timeout=300)
    assert "the real PyTorch is already imported" in proc.stdout, proc.stderr


def test_child_processes_keep_the_mapping(tmp_path):
    out = run_program(tmp_path, """
        import multiprocessing as mp
        import subprocess, sys
        import torch
        from torch.utils.data import DataLoader, Dataset


        def report(queue):
            import torch, tensorlib, importlib.metadata
            queue.put((torch.ones(1).__class__ is tensorlib.Tensor,
                       importlib.metadata.version("torch")))


        class Squares(Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                import torch, tensorlib
                assert isinstance(torch.tensor(0), tensorlib.Tensor)
                return torch.tensor(float(i * i))


        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            queue = ctx.Queue()
            child = ctx.Process(target=report, args=(queue,))
            child.start()
            print(*queue.get(timeout=120))
            child.join()
            sub = subprocess.run([sys.executable, "-c", "import torch, tensorlib; "
                                  "print(torch.tensor(1).__class__ is tensorlib.Tensor)"],
                                 capture_output=True, text=True, check=True)
            print(sub.stdout.strip())
            loader = DataLoader(Squares(), batch_size=2, num_workers=2,
                                multiprocessing_context="spawn")
            print(sum(float(b.sum()) for b in loader))
    """)
    spawned, subprocess_line, loader_sum = out.strip().splitlines()
    assert spawned.split()[0] == "True" and spawned.split()[1].startswith("2.")
    assert subprocess_line == "True" and float(loader_sum) == 14.0


@pytest.mark.parametrize("version,other,expected", [
    ("2.5.0", "2.0", True), ("2.5.0", (2, 5), True), ("2.5.0", "2.10", False),
    ("2.5.0", (2, 6, 0), False), ("2.5.0", "2.5.0a0", True)])
def test_torch_version_compares_by_release_numbers(version, other, expected):
    assert (TorchVersion(version) >= other) is expected
    assert TorchVersion(version) == version
