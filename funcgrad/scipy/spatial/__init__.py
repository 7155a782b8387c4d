"""``funcgrad.scipy.spatial``: spatial algorithms, as ``jax.scipy.spatial`` (its
``transform`` submodule: ``Rotation`` and ``Slerp``)."""
from funcgrad.scipy.spatial import transform  # noqa: F401

__all__ = ["transform"]
