"""nn.functional: dropout (being written)."""
__all__ = []
