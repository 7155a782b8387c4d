"""Eager-only linear algebra: NumPy's LAPACK calls for concrete values.

``funcgrad.numpy.linalg`` computes ``solve``/``inv`` and ``slogdet`` as composites of
``lu`` and ``triangular_solve`` (``linalg.py``), so they stage, batch, lower and
differentiate to any order. But ``lu``'s impl is a Python loop of NumPy operations
(NumPy exposes no LU), and the eager tape of an outermost ``grad`` runs the composite
through the general reverse mode: a 30 x 30 solve took milliseconds where NumPy's
``dgesv`` takes microseconds. When the operands are concrete values -- no transform
sees them, or only the eager tape (``trace.eager_operands``) -- ``funcgrad.numpy``
binds the primitives below instead: one LAPACK call each (``np.linalg.solve`` /
``slogdet``, NumPy's values exactly), and one NumPy cotangent rule on the tape
(autograd's). Anything traced (``jit``, ``vmap``, ``jvp``, the general reverse mode,
a control-flow body) gets the composite, so these primitives have no JVP, transpose,
batch or lower rule: they are never staged.

=========  =============================  ===========================================
primitive  outputs                        cotangent rule (A^T: plain transpose)
=========  =============================  ===========================================
solve      X with A X = B; B (..., n, k)  ct_B = solve(A^T, ct), ct_A = -ct_B X^T
           or B (n,) with A (n, n)
slogdet    sign, log|det A| (real A)      ct_A = ct_logabsdet inv(A)^T
=========  =============================  ===========================================

A singular matrix gives NaN (``solve``; the cotangents too), as the composite and
compiled code do; ``slogdet`` of a singular matrix is ``(0, -inf)``, NumPy's.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.ad_util import Zero
from funcgrad.core.avals import ShapedArray
from funcgrad.core.primitive import Primitive, allow_missing, defvjp_eager
from funcgrad.core.prims import linalg as la

_EAGER_ONLY = ("eager only: funcgrad.numpy binds it on concrete values (or the eager tape's) "
               "and stages the lu/triangular_solve composite otherwise, so no transform sees it")


def _eager_only(prim):
    for kind in ("jvp", "transpose", "batch", "lower"):
        allow_missing(kind, prim, _EAGER_ONLY)


def _mT(x):
    return np.swapaxes(x, -1, -2)


# --- solve ---------------------------------------------------------------------------------------

solve_p = Primitive("solve")


@solve_p.def_impl
def _solve_impl(a, b):
    return la._nan_where_lapack_fails(np.linalg.solve, a, b)


@solve_p.def_abstract_eval
def _solve_abstract_eval(a, b):
    la._check_matrix("solve", a, argname="a", kinds="fc")
    vector = a.ndim == 2 and b.ndim == 1  # (one system, b a vector: NumPy's reading of a 1-d b)
    if not vector:
        la._check_matrix("solve", b, square=False, argname="b", kinds="fc")
    if a.dtype != b.dtype or (b.shape != a.shape[-1:] if vector else
                              (b.shape[:-2] != a.shape[:-2] or b.shape[-2] != a.shape[-1])):
        raise ValueError(f"solve: b must have a's dtype and shape (..., n, k) with a's batch dims and n (or (n,) "
                         f"for a single matrix), got a {a.str_short()} and b {b.str_short()}")
    return b.strip_weak_type()


def _solve_eager_vjp(ct, ans, primals, which):
    ct_b = la._nan_where_lapack_fails(np.linalg.solve, _mT(primals[0]), ct)
    if 0 not in which:
        return [None, ct_b]
    ct_a = -np.multiply.outer(ct_b, ans) if ans.ndim == 1 else -np.matmul(ct_b, _mT(ans))
    return [ct_a, ct_b]


defvjp_eager(solve_p, _solve_eager_vjp, ans=True)
_eager_only(solve_p)


# --- slogdet -------------------------------------------------------------------------------------

slogdet_p = Primitive("slogdet", multiple_results=True)


@slogdet_p.def_impl
def _slogdet_impl(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return [np.asarray(sign), np.asarray(logabsdet)]


@slogdet_p.def_abstract_eval
def _slogdet_abstract_eval(a):
    la._check_matrix("slogdet", a, kinds="f")  # (complex: the sign has a tangent; the composite gives it)
    batch = a.shape[:-2]
    return [ShapedArray(batch, a.dtype, False), ShapedArray(batch, dtypes.real_dtype(a.dtype), False)]


def _slogdet_eager_vjp(ct, ans, primals, which):
    ct_logabsdet = ct[1]  # (the sign of a real matrix is piecewise constant: no tangent)
    if type(ct_logabsdet) is Zero:
        return [None]
    inv = la._nan_where_lapack_fails(np.linalg.inv, primals[0])
    return [np.asarray(ct_logabsdet)[..., None, None] * _mT(inv)]


defvjp_eager(slogdet_p, _slogdet_eager_vjp)
_eager_only(slogdet_p)


# --- eager cotangent rules of linalg.py's cholesky and triangular_solve -----------------------
# (here for linalg.py's line budget). Each is the transpose of the primitive's JVP rule,
# step by step, with NumPy: plain transposes, conjugates where the JVP conjugates.

def _cholesky_eager_vjp(ct, ans, primals, which):
    # JVP: S = sym(dA) (strict lower triangle mirrored, real diagonal), X = L^-1 S L^-H,
    # dL = L (X o M) with M = strict lower + diagonal / 2.
    l = ans
    n = l.shape[-1]
    l_inv = la._nan_where_lapack_fails(np.linalg.inv, l)
    ct_x = np.matmul(_mT(l), ct) * (np.tri(n, n, -1) + 0.5 * np.eye(n)).astype(l.real.dtype)
    ct_s = np.matmul(_mT(l_inv), np.matmul(ct_x, l_inv.conj()))
    strict = np.tril(ct_s, -1) + np.tril(_mT(ct_s).conj(), -1)
    diag = np.eye(n, dtype=bool)
    return [np.where(diag, ct_s.real if ct_s.dtype.kind == "c" else ct_s, strict).astype(l.dtype, copy=False)]


defvjp_eager(la.cholesky_p, _cholesky_eager_vjp, primals="nothing", ans=True)


def _triangular_solve_eager_vjp(ct, ans, primals, which, *, lower, transpose_a, unit_diagonal):
    # JVP: dX = op(A)^-1 (dB - op(dA_used) X); op(A)^-T is the solve with transpose_a flipped.
    a = primals[0]
    ct_b = la._triangular_solve_impl(a, ct, lower=lower, transpose_a=not transpose_a, unit_diagonal=unit_diagonal)
    if 0 not in which:
        return [None, ct_b]
    ct_op = -np.matmul(ct_b, _mT(ans))
    ct_a = _mT(ct_op) if transpose_a else ct_op
    k = -1 if unit_diagonal else 0
    return [np.tril(ct_a, k) if lower else np.triu(ct_a, -k), ct_b]


defvjp_eager(la.triangular_solve_p, _triangular_solve_eager_vjp, ans=True)


# --- one-line functions --------------------------------------------------------------------------

def solve(a, b):
    """``X`` with ``A X = B`` by LAPACK (``b`` (..., n, k) with a's batch dims): eager only."""
    return solve_p.bind(a, b)


def slogdet(a):
    """``(sign, log|det A|)`` of real ``a`` by LAPACK: eager only."""
    return tuple(slogdet_p.bind(a))


