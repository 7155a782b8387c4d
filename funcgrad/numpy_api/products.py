"""funcgrad.numpy: products functions."""
__all__: list[str] = []
