"""funcgrad.numpy: creation functions."""
__all__: list[str] = []
