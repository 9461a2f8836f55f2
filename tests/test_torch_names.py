"""Small torch.* modules and names that libraries (torchvision among them) import at start-up:
torch.types, torch.utils.model_zoo, torch.hub.tqdm, torch._dynamo.utils,
torch.backends.cpu, torch._custom_ops."""
import typing

import tensorlib


def test_types_aliases():
    from tensorlib import types
    assert types._device is tensorlib.device and types._dtype is tensorlib.dtype
    assert typing.get_args(types.Number) == (int, float, bool)
    assert tensorlib.Size in typing.get_args(types._size)
    assert types._int is int and types._bool is bool


def test_model_zoo_is_hubs_loader_and_progress_bar(tmp_path):
    from tensorlib.utils import model_zoo
    assert model_zoo.tqdm is tensorlib.hub.tqdm
    tensorlib.save({"w": tensorlib.ones(2)}, tmp_path / "w.pt")
    loaded = model_zoo.load_url("https://example.invalid/models/w.pt", model_dir=str(tmp_path))
    assert loaded["w"].tolist() == [1.0, 1.0]
    with tensorlib.hub.tqdm(total=4, disable=True) as bar:
        bar.update(4)


def test_dynamo_names_answer_from_tensorlib_compiler():
    from tensorlib import _dynamo
    from tensorlib._dynamo.utils import is_compile_supported
    assert is_compile_supported("cpu") is True
    assert is_compile_supported("cuda") == ("cuda" in tensorlib.backends.available())
    assert _dynamo.reset is tensorlib.compiler.reset
    assert _dynamo.is_compiling() is False


def test_cpu_capability_is_one_of_pytorchs_names():
    assert tensorlib.backends.cpu.get_cpu_capability() in (
        "DEFAULT", "AVX2", "AVX512")


def test_custom_ops_module_names():
    from tensorlib import _custom_ops
    assert _custom_ops.get_ctx() is None
    assert callable(_custom_ops.impl_abstract)
