"""``eig``: eigenvalues and right eigenvectors of a general square matrix (stacks too).

The outputs are always complex (complex64 for float32/complex64 input, complex128
otherwise), as JAX's: NumPy's ``eig`` returns a real array when every eigenvalue happens
to be real, a value-dependent dtype a traced program cannot have. The values are
NumPy's (``numpy.linalg.eig``, LAPACK ``?geev``): eigenvectors of unit 2-norm, each
scaled by LAPACK so that its largest component is real.

Derivatives are JAX's (``jax.lax.linalg.eig``'s JVP, distinct eigenvalues assumed):
with ``M = V^-1 dA V``, ``dw = diag(M)`` and ``dV = dU - V diag(V^H dU)`` where
``dU = V (F o M)``, ``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal. The correction
keeps ``V^H dV`` zero on the diagonal: the norm stays 1 and the phase follows JAX's
gauge, which differs from LAPACK's "largest component real" convention -- so the
tangent of ``V`` itself matches finite differences of NumPy's eigenvectors only up to
a phase term ``V diag(i theta)``; phase-invariant functions (``|V|``, projectors,
eigenvalues) agree exactly.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import ad_util as ad
from funcgrad.core import dtypes
from funcgrad.core.ad_util import Zero
from funcgrad.core.avals import ShapedArray
from funcgrad.core.primitive import Primitive, allow_missing, jvp_rules
from funcgrad.core.prims import linalg as la

eig_p = Primitive("eig", multiple_results=True)


@eig_p.def_impl
def _eig_impl(a, *, compute_eigenvectors=True):
    a = np.asarray(a)
    cdt = dtypes.complex_dtype(a.dtype)
    if not compute_eigenvectors:
        return [la._nan_where_lapack_fails(np.linalg.eigvals, a).astype(cdt)]
    w, v = la._nan_where_lapack_fails(lambda m: tuple(np.linalg.eig(m)), a)
    return [w.astype(cdt), v.astype(cdt)]


@eig_p.def_abstract_eval
def _eig_abstract_eval(a, *, compute_eigenvectors=True):
    la._check_matrix("eig", a, kinds="fc")
    cdt = dtypes.complex_dtype(a.dtype)
    w = ShapedArray(a.shape[:-1], cdt, False)
    return [w, ShapedArray(a.shape, cdt, False)] if compute_eigenvectors else [w]


def _solve(a, b):
    """``a^-1 b`` for square ``a`` (..., n, n) through the LU primitives."""
    lu, _, perm = la.lu(a)
    pb = la._mm(la.permutation_matrix(perm, la._aval(a).dtype), b)
    y = la.triangular_solve(lu, pb, lower=True, unit_diagonal=True)
    return la.triangular_solve(lu, y, lower=False)


def _eig_jvp(primals, tangents, *, compute_eigenvectors=True):
    (a,), (a_dot,) = primals, tangents
    w, v = eig_p.bind(a, compute_eigenvectors=True)
    outs = [w, v] if compute_eigenvectors else [w]
    if type(a_dot) is Zero:
        return outs, [Zero.like(o) for o in outs]
    da = la._cast_like(a_dot, v)  # (real input: real tangents, complex outputs)
    nd = la._aval(v).ndim
    vinv_da = _solve(v, da)
    if not compute_eigenvectors:
        # diag(V^-1 dA V) without the full product: sum_k (V^-1 dA)[i, k] V[k, i].
        return outs, [lax.reduce_sum(lax.mul(vinv_da, la._mT(v)), (nd - 1,))]
    m = la._mm(vinv_da, v)
    shape = la._aval(v).shape
    f = la._pair_inverse(lax.sub(la._rows(w, shape), la._cols(w, shape)), v)
    du = la._mm(v, lax.mul(f, m))
    corrections = lax.reduce_sum(lax.mul(lax.conj(v), du), (nd - 2,))  # diag(V^H dU)
    return outs, [la._diag(m), lax.sub(du, lax.mul(v, la._rows(corrections, shape)))]


jvp_rules[eig_p] = _eig_jvp
ad.nonlinear(eig_p)
la._leading_batcher(eig_p)
allow_missing("eager_vjp", eig_p, la._NO_NUMPY_RULE)


def eig(a, *, compute_eigenvectors: bool = True):
    """``(w, V)`` of a general square matrix (complex), or ``(w,)`` without vectors."""
    return tuple(eig_p.bind(a, compute_eigenvectors=bool(compute_eigenvectors)))


from funcgrad.core import lax_api as lax  # noqa: E402  (bottom, as in linalg.py)
