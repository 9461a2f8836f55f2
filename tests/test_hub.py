"""tensorlib.hub: entry points from a local hubconf.py, and a clear error for downloads."""
import pytest

import tensorlib

HUBCONF = '''
"""A tiny hub repository."""
import tensorlib
import helper_of_this_repo

dependencies = ["numpy"]


def tiny_linear(out_features=2, *, bias=True):
    """A Linear(3, out_features)."""
    return tensorlib.nn.Linear(3, out_features, bias=bias)


def _private():
    return None


constant = 3
'''


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "hubconf.py").write_text(HUBCONF)
    (tmp_path / "helper_of_this_repo.py").write_text("X = 1\n")
    return str(tmp_path)


def test_load_list_help_local(repo):
    model = tensorlib.hub.load(repo, "tiny_linear", 4, source="local", bias=False)
    assert isinstance(model, tensorlib.nn.Linear)
    assert model.weight.shape == (4, 3) and model.bias is None
    assert tensorlib.hub.list(repo, source="local") == ["tiny_linear"]
    assert tensorlib.hub.help(repo, "tiny_linear", source="local").strip() == \
        "A Linear(3, out_features)."


def test_errors(repo, tmp_path):
    with pytest.raises(RuntimeError, match="Cannot find callable missing in hubconf"):
        tensorlib.hub.load(repo, "missing", source="local")
    with pytest.raises(RuntimeError, match="Cannot find callable constant in hubconf"):
        tensorlib.hub.load(repo, "constant", source="local")
    with pytest.raises(ValueError, match='Unknown source: "svn"'):
        tensorlib.hub.load(repo, "tiny_linear", source="svn")
    with pytest.raises(RuntimeError, match="does not download"):
        tensorlib.hub.load("pytorch/vision", "resnet18")
    with pytest.raises(RuntimeError, match="does not download"):
        tensorlib.hub.download_url_to_file("https://example.com/w.pt", str(tmp_path / "w"))
    with pytest.raises(RuntimeError, match="does not download"):
        tensorlib.hub.load_state_dict_from_url("https://example.com/w.pt",
                                               model_dir=str(tmp_path))
    (tmp_path / "hubconf.py").write_text('dependencies = ["no_such_module_xyz"]\n'
                                         'def f():\n    return 1\n')
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_module_xyz"):
        tensorlib.hub.load(str(tmp_path), "f", source="local")


def test_cached_state_dict_and_dirs(tmp_path, monkeypatch):
    tensorlib.save({"w": tensorlib.ones(2)}, str(tmp_path / "w.pt"))
    state = tensorlib.hub.load_state_dict_from_url("https://example.com/files/w.pt",
                                                   model_dir=str(tmp_path))
    assert state["w"].tolist() == [1.0, 1.0]
    # put back what set_dir replaces (None: "follow TORCH_HOME"), not the path it resolved to
    monkeypatch.setattr(tensorlib.hub, "_hub_dir", tensorlib.hub._hub_dir)
    tensorlib.hub.set_dir(str(tmp_path))
    assert tensorlib.hub.get_dir() == str(tmp_path)


def test_torch_home_follows_the_environment_as_pytorch(monkeypatch, tmp_path):
    from tensorlib import hub
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert hub._get_torch_home() == str(tmp_path / "th")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert hub._get_torch_home() == str(tmp_path / "cache" / "torch")
    torch = pytest.importorskip("torch")
    assert hub._get_torch_home() == torch.hub._get_torch_home()


def test_hash_regex_reads_a_checkpoints_hash_prefix():
    torch = pytest.importorskip("torch")
    for name in ("resnet18-f37072fd.pth", "weights.pth", "a-b-0123abc.tar.gz"):
        ours, theirs = tensorlib.hub.HASH_REGEX.search(name), torch.hub.HASH_REGEX.search(name)
        assert (ours and ours.group(1)) == (theirs and theirs.group(1))
    assert tensorlib.hub.HASH_REGEX.search("resnet18-f37072fd.pth").group(1) == "f37072fd"


def test_urllib_names_libraries_import_from_hub():
    """timm imports `urlparse` from torch.hub, as PyTorch's module has it."""
    from tensorlib.hub import HTTPError, Request, URLError, urlopen, urlparse
    assert urlparse("https://x.org/a/b.pth").path == "/a/b.pth"
    assert callable(urlopen) and Request and issubclass(HTTPError, URLError)
