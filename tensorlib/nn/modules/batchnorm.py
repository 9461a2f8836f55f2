"""nn.modules.batchnorm (being written)."""
__all__ = []
