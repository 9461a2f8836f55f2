"""nn.functional: upsampling (being written)."""
__all__ = []
