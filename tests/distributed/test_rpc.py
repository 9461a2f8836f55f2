"""torch.distributed.rpc as PyTorch builds without RPC have it: importable, is_available()
False and nothing else, so programs take their no-RPC path (PyG's `hasattr(rpc, 'api')`)."""
from tensorlib.distributed import rpc


def test_rpc_reports_unavailable_and_exposes_nothing_else():
    assert rpc.is_available() is False
    assert rpc.__all__ == ["is_available"]
    for name in ("api", "init_rpc", "rpc_sync", "rpc_async", "TensorPipeRpcBackendOptions"):
        assert not hasattr(rpc, name)
