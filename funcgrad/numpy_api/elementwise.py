"""funcgrad.numpy: elementwise functions."""
__all__: list[str] = []
