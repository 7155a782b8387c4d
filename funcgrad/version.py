"""funcgrad's version (``funcgrad.version.__version__``, as ``jax.version``)."""
__version__ = "0.1.0"
_version = __version__
__version_info__ = tuple(int(p) for p in __version__.split("."))
__all__ = ["__version__", "__version_info__"]
