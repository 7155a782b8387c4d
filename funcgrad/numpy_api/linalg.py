"""funcgrad.numpy: linalg functions."""
__all__: list[str] = []
