"""``funcgrad.scipy.special`` (filled in by the autodiff work)."""
__all__: list[str] = []
