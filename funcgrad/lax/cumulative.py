"""Cumulative reductions with ``jax.lax``'s signatures ``f(operand, axis=0, reverse=False)``:
``cumsum``, ``cumprod`` (primitives), and ``cummax``, ``cummin``, ``cumlogsumexp``
(``associative_scan`` of ``max``/``min``/``logaddexp``, as JAX defines their derivatives:
cummax's goes to the running maximum's entry, split in halves at ties as ``lax.max`` does,
combined along JAX's parallel-prefix tree; cumlogsumexp never overflows)."""
from __future__ import annotations

from funcgrad.core import lax_api as lax
from funcgrad.lax import _util
from funcgrad.lax.scans import associative_scan
from funcgrad.numpy_api.elementwise import logaddexp

__all__ = ["cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum"]


def _check(fname, operand, axis, kinds):
    a = _util.aval(fname, operand)
    if a.ndim == 0:
        raise ValueError(f"{fname}: operand must have at least one axis, got shape {a.shape}")
    if a.dtype.kind not in kinds:
        raise TypeError(f"{fname}: operand of dtype {a.dtype.name} is not supported (shape {a.shape})")
    return _util.axis(fname, axis, a.ndim, a.shape)


def cumsum(operand, axis=0, reverse=False):
    """Inclusive running sum along ``axis`` (``reverse``: from the end)."""
    return lax.cumsum(operand, _check("cumsum", operand, axis, "iuf"), bool(reverse))


def cumprod(operand, axis=0, reverse=False):
    """Inclusive running product along ``axis`` (``reverse``: from the end)."""
    return lax.cumprod(operand, _check("cumprod", operand, axis, "iuf"), bool(reverse))


def cummax(operand, axis=0, reverse=False):
    """Running maximum along ``axis`` (NaN propagates, as ``lax.max``)."""
    return associative_scan(lax.max, operand, bool(reverse), _check("cummax", operand, axis, "biuf"))


def cummin(operand, axis=0, reverse=False):
    """Running minimum along ``axis`` (NaN propagates, as ``lax.min``)."""
    return associative_scan(lax.min, operand, bool(reverse), _check("cummin", operand, axis, "biuf"))


def cumlogsumexp(operand, axis=0, reverse=False):
    """Running ``log(sum(exp(x)))`` along ``axis``, stable for large and ``-inf`` entries."""
    return associative_scan(logaddexp, operand, bool(reverse), _check("cumlogsumexp", operand, axis, "f"))
