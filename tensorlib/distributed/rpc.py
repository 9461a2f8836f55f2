"""torch.distributed.rpc as a PyTorch build without RPC support has it: the module imports
and `is_available()` says False. tensorlib has no RPC agent (TensorPipe), so programs take
the path they take on such builds (PyG imports this module and checks `hasattr(rpc, 'api')`
before using any of it)."""

__all__ = ["is_available"]


def is_available():
    """False: tensorlib provides no RPC framework (init_rpc, rpc_sync, RRef, ...)."""
    return False
