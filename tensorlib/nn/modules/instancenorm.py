"""nn.modules.instancenorm (being written)."""
__all__ = []
