"""nn.modules.distance (being written)."""
__all__ = []
