"""``lax.dot``, ``lax.dot_general`` with JAX's keywords, and ``lax.Precision``.

Strict, as every ``lax`` function: both operands must have one dtype (no promotion).
``precision`` is checked and otherwise ignored (CPU products are computed at the full
precision of their dtype); ``preferred_element_type`` is the dtype the product is
computed and returned in (both operands are converted to it first).
"""
from __future__ import annotations

from funcgrad.core import dtypes
from funcgrad.core import lax_api as _lax
from funcgrad.core.precision import Precision, check_precision
from funcgrad.core.trace import get_aval_any

__all__ = ["Precision", "dot", "dot_general"]


def _prepare(fname, x, y, precision, preferred_element_type):
    if precision is not None:
        check_precision(fname, precision)
    if preferred_element_type is None:
        return x, y
    dtype = dtypes.canonicalize(preferred_element_type, what=f"{fname} preferred_element_type")
    return _lax.convert_element_type(x, dtype), _lax.convert_element_type(y, dtype)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """The general tensor contraction ``jax.lax.dot_general``: ``dimension_numbers`` is
    ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``; the result's axes are the
    batch axes, then ``lhs``'s free axes, then ``rhs``'s."""
    lhs, rhs = _prepare("dot_general", lhs, rhs, precision, preferred_element_type)
    return _lax.dot_general(lhs, rhs, dimension_numbers)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector-vector, matrix-vector or matrix-matrix product (``jax.lax.dot``): contracts
    the last axis of ``lhs`` with the first of ``rhs``; both 1-d or 2-d.

    >>> lax.dot(np.ones((2, 3)), np.ones(3))
    Array([3., 3.])
    """
    lhs_shape, rhs_shape = get_aval_any(lhs).shape, get_aval_any(rhs).shape
    if len(lhs_shape) not in (1, 2) or len(rhs_shape) not in (1, 2) or lhs_shape[-1] != rhs_shape[0]:
        raise TypeError(f"dot: incompatible shapes for dot: got {lhs_shape} and {rhs_shape} (1-d or 2-d operands, "
                        "lhs's last axis the size of rhs's first)")
    lhs, rhs = _prepare("dot", lhs, rhs, precision, preferred_element_type)
    return _lax.dot_general(lhs, rhs, (((len(lhs_shape) - 1,), (0,)), ((), ())))
