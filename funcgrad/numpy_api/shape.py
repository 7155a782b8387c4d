"""funcgrad.numpy: shape functions."""
__all__: list[str] = []
