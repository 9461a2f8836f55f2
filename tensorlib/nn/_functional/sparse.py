"""nn.functional: sparse (being written)."""
__all__ = []
