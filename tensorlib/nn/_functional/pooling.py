"""nn.functional: pooling (being written)."""
__all__ = []
