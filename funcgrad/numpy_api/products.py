"""funcgrad.numpy: products (dot, matmul, vdot, inner, outer, tensordot, kron, cross; einsum is
in ``einsum.py``).

Everything contracting is one ``dot_general`` (plus transposes/reshapes/broadcasts);
``outer``, ``kron`` and ``cross`` are elementwise products. Dtypes promote like NumPy.
Python scalars are not weak here: NumPy's product functions convert them with
``asarray`` (so ``dot(2.0, float32_array)`` is float64, as in NumPy).
``dot_general`` has no boolean form, so products of booleans are computed in int64 and
turned back into bool with ``!= 0`` -- NumPy's boolean sum-of-products (OR of ANDs).
"""
from __future__ import annotations

import operator

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.precision import check_precision
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import aval_of, shape_of

__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot", "kron", "cross"]


# --- helpers ---------------------------------------------------------------------------------
def _promote(fname, *args):
    """Check and promote to one dtype; bools go to int64 for ``dot_general``.
    Returns (operands, result dtype)."""
    dtype = _util._uniform_dtype(args, same_shape=False)
    if dtype is not None and dtype != dtypes.bool_:
        return list(args), dtype  # arrays/tracers of one strong dtype: nothing to do
    _util.check_arraylike(fname, *args)
    ops = _util.promote_dtypes(*[_strong(a, fname) for a in args])
    dtype = aval_of(ops[0]).dtype
    if dtype == dtypes.bool_:
        ops = [lax.convert_element_type(x, dtypes.int64) for x in ops]
    return ops, dtype


def _product_keywords(fname, a, b, precision, preferred_element_type):
    """JAX's keywords of the products: ``precision`` is checked and otherwise ignored (CPU
    products are computed at the full precision of their dtype); ``preferred_element_type``
    is the dtype the product is computed and returned in (the operands are cast to it)."""
    if precision is not None:
        check_precision(fname, precision)
    if preferred_element_type is None:
        return a, b
    dtype = dtypes.canonicalize(preferred_element_type, what=f"{fname} preferred_element_type")
    return _util.asarray(a, dtype, fname=fname), _util.asarray(b, dtype, fname=fname)


def _strong(x, fname="products"):
    """``x`` as an array whose dtype counts in promotion. NumPy's product functions
    convert their inputs with ``asarray`` first, so a Python scalar is a 0-d float64 /
    int64 array there (``numpy.dot(2.0, float32_array)`` is float64), unlike the
    elementwise functions where it is weak."""
    x = _util.asarray(x, fname=fname)
    aval = aval_of(x)
    return lax.convert_element_type(x, aval.dtype) if aval.weak_type else x


def _finish(out, dtype, scalar=True):
    """Back to a bool result if needed. (Eager 0-d results are 0-d values, made by
    ``bind``; a plain 0-d array becomes a NumPy scalar, which the public boundary makes
    a value.)"""
    if dtype == dtypes.bool_ and aval_of(out).dtype != dtypes.bool_:
        out = lax.ne(out, _util.full(shape_of(out), 0, aval_of(out).dtype))
    if scalar and type(out) is np.ndarray and out.ndim == 0:
        out = out[()]
    elif not scalar and isinstance(out, np.generic):
        out = np.asarray(out)
    return out


def _dot_general(x, y, contract, batch=((), ())):
    return lax.dot_general(x, y, (tuple(contract), tuple(batch)))


def _mul(fname, x, y):
    """Elementwise product with broadcasting (``and`` for bools)."""
    x, y = _util.promote_shapes(fname, x, y)
    return lax.bitwise_and(x, y) if aval_of(x).dtype == dtypes.bool_ else lax.mul(x, y)


def _sum(x, axes):
    """reduce_sum keeping the dtype (int32 stays int32, as in einsum)."""
    if not axes:
        return x
    return lax.convert_element_type(lax.reduce_sum(x, axes), aval_of(x).dtype)


# --- dot, vdot, inner, outer -----------------------------------------------------------------
def dot(a, b, *, precision=None, preferred_element_type=None):
    """NumPy's ``dot``: scalars multiply; otherwise contract the last axis of ``a`` with
    the second-to-last axis of ``b`` (its only axis when ``b`` is 1-d).

    >>> fnp.dot(np.ones((2, 3)), np.ones(3))
    Array([3., 3.])
    """
    a, b = _product_keywords("dot", a, b, precision, preferred_element_type)
    (x, y), dtype = _promote("dot", a, b)
    xs, ys = shape_of(x), shape_of(y)
    if not xs or not ys:
        return _finish(_mul("dot", x, y), dtype)
    xc, yc = len(xs) - 1, max(len(ys) - 2, 0)
    if xs[xc] != ys[yc]:
        raise ValueError(f"dot: shapes {xs} and {ys} not aligned: {xs[xc]} (dim {xc}) != {ys[yc]} (dim {yc})")
    return _finish(_dot_general(x, y, ((xc,), (yc,))), dtype)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened inputs, conjugating the first if complex.

    >>> fnp.vdot(np.array([1j, 2]), np.array([1j, 1]))
    Array(3.+0.j)
    """
    a, b = _product_keywords("vdot", a, b, precision, preferred_element_type)
    (x, y), dtype = _promote("vdot", a, b)
    if aval_of(x).dtype.kind == "c":
        x = lax.conj(x)
    x, y = (lax.reshape(v, (aval_of(v).size,)) for v in (x, y))
    if shape_of(x) != shape_of(y):
        raise ValueError(
            f"vdot: inputs of shapes {shape_of(a)} and {shape_of(b)} have different sizes "
            f"({shape_of(x)[0]} != {shape_of(y)[0]})"
        )
    return _finish(_dot_general(x, y, ((0,), (0,))), dtype)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Contract the last axes of ``a`` and ``b``; scalars multiply."""
    a, b = _product_keywords("inner", a, b, precision, preferred_element_type)
    (x, y), dtype = _promote("inner", a, b)
    xs, ys = shape_of(x), shape_of(y)
    if not xs or not ys:
        return _finish(_mul("inner", x, y), dtype)
    if xs[-1] != ys[-1]:
        raise ValueError(f"inner: shapes {xs} and {ys} mismatch in their last dimension ({xs[-1]} != {ys[-1]})")
    return _finish(_dot_general(x, y, ((len(xs) - 1,), (len(ys) - 1,))), dtype)


def outer(a, b):
    """``outer(a, b)[i, j] = a.ravel()[i] * b.ravel()[j]`` (an elementwise product)."""
    _util.check_arraylike("outer", a, b)
    x, y = _util.promote_dtypes(_strong(a, "outer"), _strong(b, "outer"))
    x = lax.reshape(x, (aval_of(x).size, 1))
    y = lax.reshape(y, (1, aval_of(y).size))
    return _mul("outer", x, y)


# --- matmul -----------------------------------------------------------------------------------
def matmul(a, b, *, precision=None, preferred_element_type=None):
    """Matrix product with broadcast batch dimensions, like ``numpy.matmul`` / ``@``.

    A 1-d ``a`` is a row vector and a 1-d ``b`` a column vector (the added axis is
    removed from the result); 0-d operands are an error (use ``multiply``).
    """
    a, b = _product_keywords("matmul", a, b, precision, preferred_element_type)
    (x, y), dtype = _promote("matmul", a, b)
    xs, ys = x.shape, y.shape  # (arrays or tracers by now)
    for i, s in enumerate((xs, ys)):
        if not s:
            raise ValueError(
                f"matmul: operand {i} is 0-d (shapes {xs} and {ys}); matmul needs at least 1-d "
                "operands, use multiply (*) for scalars"
            )
    x1, y1 = len(xs) == 1, len(ys) == 1
    if x1 or y1:  # a vector operand: one dot_general, no reshapes (clean IR, cheap eagerly)
        kx, ky = (0 if x1 else len(xs) - 1), (0 if y1 else len(ys) - 2)
        if xs[kx] != ys[ky]:
            raise ValueError(
                f"matmul: shapes {xs} and {ys} mismatch in the contracted dimension: "
                f"{xs[kx]} (dim {kx} of operand 0) != {ys[ky]} (dim {ky} of operand 1)"
            )
        return _finish(_dot_general(x, y, ((kx,), (ky,))), dtype)
    if x1:
        x, xs = lax.reshape(x, (1,) + xs), (1,) + xs
    if y1:
        y, ys = lax.reshape(y, ys + (1,)), ys + (1,)
    if xs[-1] != ys[-2]:
        raise ValueError(
            f"matmul: shapes {shape_of(a)} and {shape_of(b)} mismatch in the contracted "
            f"dimension: {xs[-1]} (last dim of operand 0) != {ys[-2]} (dim -2 of operand 1)"
        )
    if len(ys) == 2:  # (..., m, k) @ (k, n): no batch dims on the right, no broadcast needed
        out = _dot_general(x, y, ((len(xs) - 1,), (0,)))
    else:
        try:
            batch = tuple(np.broadcast_shapes(xs[:-2], ys[:-2]))
        except ValueError:
            raise ValueError(
                f"matmul: batch dimensions of shapes {shape_of(a)} and {shape_of(b)} "
                f"cannot be broadcast together ({xs[:-2]} vs {ys[:-2]})"
            ) from None
        x = _util.broadcast_to(x, batch + xs[-2:])
        y = _util.broadcast_to(y, batch + ys[-2:])
        nb = len(batch)
        out = _dot_general(x, y, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    out_shape = shape_of(out)
    if x1:
        out_shape = out_shape[:-2] + out_shape[-1:]
    if y1:
        out_shape = out_shape[:-1]
    return _finish(lax.reshape(out, out_shape), dtype)


# --- tensordot --------------------------------------------------------------------------------
def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Sum products over ``axes``: an int N (last N of ``a`` with first N of ``b``) or a
    pair of axis sequences. Result dims: free dims of ``a``, then free dims of ``b``."""
    a, b = _product_keywords("tensordot", a, b, precision, preferred_element_type)
    (x, y), dtype = _promote("tensordot", a, b)
    xs, ys = shape_of(x), shape_of(y)
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if n < 0 or n > len(xs) or n > len(ys):
            raise ValueError(f"tensordot: axes={n} is out of range for shapes {xs} and {ys}")
        ax, bx = list(range(len(xs) - n, len(xs))), list(range(n))
    else:
        try:
            ax, bx = axes
        except (TypeError, ValueError):
            raise ValueError("tensordot: axes must be an int or a pair of axis sequences") from None
        ax = [ax] if np.ndim(ax) == 0 else list(ax)
        bx = [bx] if np.ndim(bx) == 0 else list(bx)
        if len(ax) != len(bx):
            raise ValueError(f"tensordot: axes {ax} and {bx} have different lengths")
        ax = [_util.canonicalize_axis(i, len(xs), "tensordot") for i in ax]
        bx = [_util.canonicalize_axis(i, len(ys), "tensordot") for i in bx]
    for i, j in zip(ax, bx):
        if xs[i] != ys[j]:
            raise ValueError(
                f"tensordot: shape-mismatch for sum: {xs} axis {i} (size {xs[i]}) != {ys} axis {j} (size {ys[j]})"
            )
    return _finish(_dot_general(x, y, (ax, bx)), dtype, scalar=False)


# --- kron, cross ------------------------------------------------------------------------------
def kron(a, b):
    """Kronecker product: blocks ``a[i, j] * b``; ranks are matched by leading 1s."""
    _util.check_arraylike("kron", a, b)
    x, y = _util.promote_dtypes(_strong(a, "kron"), _strong(b, "kron"))
    xs, ys = shape_of(x), shape_of(y)
    nd = max(len(xs), len(ys))
    xs, ys = (1,) * (nd - len(xs)) + xs, (1,) * (nd - len(ys)) + ys
    # x -> (a0, 1, a1, 1, ...), y -> (1, b0, 1, b1, ...): their product interleaves them.
    x = lax.reshape(x, tuple(d for n in xs for d in (n, 1)))
    y = lax.reshape(y, tuple(d for n in ys for d in (1, n)))
    out = _mul("kron", x, y)
    out = lax.reshape(out, tuple(p * q for p, q in zip(xs, ys)))
    return _finish(out, aval_of(out).dtype)  # eager 0-d -> NumPy scalar, as numpy.kron


def _component(v, i):
    """``v[..., i]``."""
    return lax.reshape(lax.slice(v, (0,) * (len(shape_of(v)) - 1) + (i,),
                                 shape_of(v)[:-1] + (i + 1,)), shape_of(v)[:-1])


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, taken as having z = 0) along ``axis``,
    broadcasting the other dimensions, like ``numpy.cross``. Two 2-vectors give the
    scalar z-component."""
    if axis is not None:
        axisa = axisb = axisc = axis
    _util.check_arraylike("cross", a, b)
    x, y = _util.promote_dtypes(_strong(a, "cross"), _strong(b, "cross"))
    if aval_of(x).dtype == dtypes.bool_:
        raise TypeError("cross: boolean inputs are not supported (NumPy cannot subtract booleans either)")
    xs, ys = shape_of(x), shape_of(y)
    if not xs or not ys:
        raise ValueError(f"cross: inputs must be at least 1-d, got shapes {xs} and {ys}")
    ia = _util.canonicalize_axis(axisa, len(xs), "cross")
    ib = _util.canonicalize_axis(axisb, len(ys), "cross")
    x = lax.transpose(x, [i for i in range(len(xs)) if i != ia] + [ia])
    y = lax.transpose(y, [i for i in range(len(ys)) if i != ib] + [ib])
    na, nb = shape_of(x)[-1], shape_of(y)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(
            f"cross: incompatible dimensions for cross product (dimension must be 2 or 3), "
            f"got {na} and {nb} (shapes {xs} and {ys})"
        )
    batch = _util.broadcast_shapes("cross", shape_of(x)[:-1], shape_of(y)[:-1])
    x = _util.broadcast_to(x, batch + (na,))
    y = _util.broadcast_to(y, batch + (nb,))
    a_ = [_component(x, i) for i in range(na)]
    b_ = [_component(y, i) for i in range(nb)]
    mul, sub, neg = lax.mul, lax.sub, lax.neg
    z = sub(mul(a_[0], b_[1]), mul(a_[1], b_[0]))
    if na == 2 and nb == 2:  # numpy.cross returns a 0-d array here, not a scalar
        return _finish(z, aval_of(z).dtype, scalar=False)
    if na == 2:  # a2 == 0
        c = [mul(a_[1], b_[2]), neg(mul(a_[0], b_[2])), z]
    elif nb == 2:  # b2 == 0
        c = [neg(mul(a_[2], b_[1])), mul(a_[2], b_[0]), z]
    else:
        c = [sub(mul(a_[1], b_[2]), mul(a_[2], b_[1])), sub(mul(a_[2], b_[0]), mul(a_[0], b_[2])), z]
    out = lax.concatenate([lax.reshape(v, batch + (1,)) for v in c], len(batch))
    ic = _util.canonicalize_axis(axisc, len(batch) + 1, "cross")
    perm = list(range(len(batch)))
    perm.insert(ic, len(batch))
    return lax.transpose(out, perm)
