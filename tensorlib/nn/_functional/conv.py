"""nn.functional: conv (being written)."""
__all__ = []
