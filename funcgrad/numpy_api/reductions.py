"""funcgrad.numpy: reductions functions."""
__all__: list[str] = []
