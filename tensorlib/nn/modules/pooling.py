"""nn.modules.pooling (being written)."""
__all__ = []
