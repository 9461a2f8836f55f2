"""nn.modules.fold (being written)."""
__all__ = []
