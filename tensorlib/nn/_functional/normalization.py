"""nn.functional: normalization (being written)."""
__all__ = []
