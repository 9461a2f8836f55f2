"""nn.functional: loss (being written)."""
__all__ = []
