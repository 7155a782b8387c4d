"""Linear-algebra primitives on stacks of matrices (leading dims are batch dims).

=================  ===========================================  ===========================
primitive          outputs                                      impl (NumPy / LAPACK)
=================  ===========================================  ===========================
cholesky           L, lower, A = L L^H (reads A's lower half)   ``np.linalg.cholesky``
triangular_solve   X with op(A) X = B (op: identity/transpose)  ``np.linalg.solve`` (upper)
lu                 LU (L unit-lower + U), pivots, permutation   partial-pivoting Doolittle
eigh               w ascending, V (reads one triangle)          ``np.linalg.eigh``
qr                 reduced Q, R                                 ``np.linalg.qr``
svd                U, s (descending), Vt  /  s                  ``np.linalg.svd``
=================  ===========================================  ===========================

Complex (Hermitian/general) input goes through the same rules with conjugate transposes,
as JAX's: ``eigh`` and ``svd`` give real ``w``/``s``; eigenvector and singular-vector
tangents follow JAX's phase gauge (``diag(V^H dV) = 0``; ``svd``'s ``diag(U^H dU)`` is
``i Im diag(U^H dA V) / s``), ``qr`` keeps R's diagonal real. ``lu``/``triangular_solve``
transposes are plain transposes (linear maps: no conjugation). ``eig`` is in ``eig.py``.

The JVP rules are the standard matrix-calculus results, written with ``lax``
functions only, so they differentiate again. Only ``triangular_solve`` is linear (in
``b``); the decompositions are allow-listed as non-linear. NumPy exposes no LU, so
``lu``'s impl is a NumPy-vectorised Doolittle elimination with partial pivoting (the
same pivot choice as LAPACK's ``getrf``). Derivatives assume what the formulas need:
a non-singular matrix for ``lu``/``triangular_solve``, distinct eigenvalues for
``eigh``, distinct non-zero singular values for ``svd``, full column rank for ``qr``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import ad_util as ad
from funcgrad.core import dtypes
from funcgrad.core.ad_util import Zero, is_undefined
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import batch_size, bdim_at, moveaxis
from funcgrad.core.primitive import GENERAL_PATH, Primitive, batch_rules, jvp_rules
from funcgrad.core.prims._checks import check_kind
from funcgrad.core.trace import get_aval_any

INDEX_DTYPE = np.dtype(np.int32)  # pivots and permutations, as LAPACK returns them


# --- shared checks and matrix helpers (helpers call lax only: they run inside rules) -----

def _nan_where_lapack_fails(fn, *arrays):
    """``fn(*arrays)`` over a stack of matrices, where a matrix LAPACK rejects (not
    positive definite, singular) gets NaN in all its outputs instead of an exception for
    the whole call: JAX's convention, and what compiled code does, so eager and ``jit``
    agree and the jitter-retry idiom (``if isnan(L).any(): ...``) works."""
    try:
        return fn(*arrays)
    except np.linalg.LinAlgError:
        pass
    batch = arrays[0].shape[:-2]
    entries = [[x[i] for x in arrays] for i in np.ndindex(batch)] if batch else [list(arrays)]
    results = []
    for entry in entries:
        try:
            results.append(fn(*entry))
        except np.linalg.LinAlgError:
            # Shapes and dtypes of the outputs from a well-posed stand-in, then NaN.
            eye = np.eye(*entry[0].shape[-2:], dtype=entry[0].dtype)
            stand_in = fn(eye, *entry[1:])
            if isinstance(stand_in, (list, tuple)):
                results.append(type(stand_in)(np.full_like(o, np.nan) for o in stand_in))
            else:
                results.append(np.full_like(stand_in, np.nan))
    if not batch:
        return results[0]
    if isinstance(results[0], (list, tuple)):
        return type(results[0])(np.stack([r[k] for r in results]).reshape(batch + results[0][k].shape)
                                for k in range(len(results[0])))
    return np.stack(results).reshape(batch + results[0].shape)


def _check_matrix(op: str, aval: ShapedArray, square: bool = True, argname: str = "operand", kinds: str = "f"):
    check_kind(op, aval, kinds, argname)
    if aval.ndim < 2:
        raise ValueError(
            f"{op}: {argname} must be a (stack of) matrices with shape (..., m, n), got {aval.str_short()}"
        )
    if square and aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"{op}: {argname} must be a (stack of) square matrices (..., n, n), got {aval.str_short()}")


def _aval(x) -> ShapedArray:
    return get_aval_any(x)


def _mT(x):
    """Swap the last two dims."""
    nd = _aval(x).ndim
    return lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _is_complex(x) -> bool:
    return _aval(x).dtype.kind == "c"


def _mH(x):
    """Conjugate transpose of the last two dims (the plain transpose for real ``x``)."""
    return lax.conj(_mT(x)) if _is_complex(x) else _mT(x)


def _cast_like(x, like):
    """``x`` (a real-valued factor such as 1/(w_j - w_i)) in ``like``'s dtype."""
    return lax.convert_element_type(x, _aval(like).dtype)


def _real_part(x):
    """Re(x) in x's own dtype (x itself when real): (x + conj x) / 2."""
    if not _is_complex(x):
        return x
    return lax.mul(lax.add(x, lax.conj(x)), lax.broadcast_in_dim(np.asarray(0.5, _aval(x).dtype), _aval(x).shape, ()))


def _mm(x, y):
    """Batched matrix product of (..., a, b) and (..., b, c) with equal batch dims."""
    nd = _aval(x).ndim
    batch = tuple(range(nd - 2))
    return lax.dot_general(x, y, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _const_like(x, mat):
    """The constant ``n x n`` matrix ``mat`` broadcast over ``x``'s batch dims."""
    aval = _aval(x)
    nd = aval.ndim
    return lax.broadcast_in_dim(np.asarray(mat, aval.dtype), aval.shape, (nd - 2, nd - 1))


def _eye_like(x):
    return _const_like(x, np.eye(_aval(x).shape[-1]))


def _tril(x, k: int = 0):
    m, n = _aval(x).shape[-2:]
    return lax.mul(x, _const_like(x, np.tri(m, n, k)))


def _triu(x, k: int = 0):
    m, n = _aval(x).shape[-2:]
    return lax.mul(x, _const_like(x, 1.0 - np.tri(m, n, k - 1)))


def _diag(x):
    """(..., n, n) -> (..., n): the diagonal."""
    return lax.reduce_sum(lax.mul(x, _eye_like(x)), (_aval(x).ndim - 1,))


def _rows(v, shape):
    """Vector (..., n) as matrix entries ``[..., i, j] = v[..., j]`` (scales columns)."""
    nd = len(shape)
    return lax.broadcast_in_dim(v, shape, tuple(range(nd - 2)) + (nd - 1,))


def _cols(v, shape):
    """Vector (..., n) as matrix entries ``[..., i, j] = v[..., i]`` (scales rows)."""
    nd = len(shape)
    return lax.broadcast_in_dim(v, shape, tuple(range(nd - 2)) + (nd - 2,))


def _symmetrize_from(dx, lower: bool):
    """The Hermitian (real: symmetric) matrix a triangle-reading op actually sees:
    ``dx``'s strict triangle mirrored (conjugated) onto the other one, and the real part
    of its diagonal (LAPACK's ?potrf/?heevd ignore the diagonal's imaginary part)."""
    strict = _tril(dx, -1) if lower else _triu(dx, 1)
    return lax.add(lax.add(strict, _mH(strict)), _real_part(lax.mul(dx, _eye_like(dx))))


def _pair_inverse(d, like):
    """``F[i, j] = 1 / d[i, j]`` off the diagonal and 0 on it (``d`` is 0 there)."""
    eye = _eye_like(like)
    return lax.div(lax.sub(_const_like(like, np.ones(_aval(like).shape[-2:])), eye), lax.add(d, eye))


def _right_solve_upper(x, r):
    """``x @ inv(R)`` for upper-triangular ``R``: ``(R^-T x^T)^T``."""
    return _mT(triangular_solve(r, _mT(x), lower=False, transpose_a=True))


def permutation_matrix(perm, dtype):
    """One-hot ``P`` (..., n, n) with ``(P @ A)[i] = A[perm[i]]``."""
    shape = _aval(perm).shape + (_aval(perm).shape[-1],)
    idx = lax.broadcast_in_dim(perm, shape, tuple(range(len(shape) - 1)))
    hit = lax.eq(idx, lax.iota(_aval(perm).dtype, shape, len(shape) - 1))
    return lax.convert_element_type(hit, dtype)


def _leading_batcher(prim):
    """Batch rule for a primitive that already maps over leading dims: move every batch
    axis to the front (broadcasting unmapped operands) and bind once."""

    def rule(args, bdims, **params):
        size = batch_size(args, bdims)
        moved = [bdim_at(x, d, size, 0) if d is None else moveaxis(x, d, 0) for x, d in zip(args, bdims)]
        out = prim.bind(*moved, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)

    batch_rules[prim] = rule


# The eager tape (outermost grad) runs eig through its JVP rule and transposes (eig.py).
_NO_NUMPY_RULE = GENERAL_PATH + "linear algebra, no NumPy rule is written (its JVP: matrix products, solves)"


# --- cholesky ------------------------------------------------------------------------------

cholesky_p = Primitive("cholesky")


@cholesky_p.def_impl
def _cholesky_impl(a):
    # LAPACK potrf('L'): reads the lower triangle
    return _nan_where_lapack_fails(np.linalg.cholesky, np.asarray(a))


@cholesky_p.def_abstract_eval
def _cholesky_abstract_eval(a):
    _check_matrix("cholesky", a, kinds="fc")
    return a.strip_weak_type()


def _cholesky_jvp(primals, tangents):
    # A = L L^H  =>  L^-1 dA L^-H = Phi + Phi^H with Phi = L^-1 dL lower: dL = L Phi, where
    # Phi is the lower triangle of L^-1 dA L^-H with its (real) diagonal halved.
    (a,), (a_dot,) = primals, tangents
    l = cholesky_p.bind(a)
    if type(a_dot) is Zero:
        return l, Zero.like(l)
    sym = _symmetrize_from(a_dot, lower=True)
    tmp = triangular_solve(l, sym, lower=True)  # L^-1 dA
    x = _mH(triangular_solve(l, _mH(tmp), lower=True))  # L^-1 dA L^-H
    n = _aval(a).shape[-1]
    phi = lax.mul(x, _const_like(x, np.tri(n, n, -1) + 0.5 * np.eye(n)))
    return l, _mm(l, phi)


jvp_rules[cholesky_p] = _cholesky_jvp
ad.nonlinear(cholesky_p)
_leading_batcher(cholesky_p)
# (its eager cotangent rule, NumPy: ``linalg_eager.py``, for this module's line budget)


# --- triangular_solve ------------------------------------------------------------------------

triangular_solve_p = Primitive("triangular_solve")


def _effective_matrix(a, lower, transpose_a, unit_diagonal):
    """op(A) as NumPy reads it: the chosen triangle (unit diagonal if asked), transposed
    if asked. Returns (matrix, is_lower)."""
    m = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        m = np.where(np.eye(n, dtype=bool), np.ones((), a.dtype), m)
    if transpose_a:
        return np.swapaxes(m, -1, -2), not lower
    return m, lower


@triangular_solve_p.def_impl
def _triangular_solve_impl(a, b, *, lower, transpose_a, unit_diagonal):
    a, b = np.asarray(a), np.asarray(b)
    m, is_lower = _effective_matrix(a, lower, transpose_a, unit_diagonal)
    if is_lower:
        # Reverse rows and columns to get an upper-triangular system: LAPACK's partial
        # pivoting then never swaps rows, so getrf/getrs amount to back substitution.
        x = _nan_where_lapack_fails(np.linalg.solve, m[..., ::-1, ::-1], b[..., ::-1, :])
        return np.ascontiguousarray(x[..., ::-1, :])
    return _nan_where_lapack_fails(np.linalg.solve, m, b)


@triangular_solve_p.def_abstract_eval
def _triangular_solve_abstract_eval(a, b, *, lower, transpose_a, unit_diagonal):
    _check_matrix("triangular_solve", a, argname="a", kinds="fc")  # (linear transposes: no conj)
    _check_matrix("triangular_solve", b, square=False, argname="b", kinds="fc")
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve: a {a.str_short()} and b {b.str_short()} must have the same dtype")
    if b.shape[:-2] != a.shape[:-2] or b.shape[-2] != a.shape[-1]:
        raise ValueError(
            f"triangular_solve: b must have shape (..., n, k) with a's batch dims and n, got a "
            f"{a.str_short()} and b {b.str_short()}"
        )
    return b.strip_weak_type()


def _op(x, transpose_a):
    return _mT(x) if transpose_a else x


def _triangular_solve_jvp(primals, tangents, *, lower, transpose_a, unit_diagonal):
    # X = op(A)^-1 B  =>  dX = op(A)^-1 (dB - op(dA) X), dA restricted to what impl reads.
    (a, b), (a_dot, b_dot) = primals, tangents
    params = dict(lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    x = triangular_solve_p.bind(a, b, **params)
    rhs = Zero.like(x) if type(b_dot) is Zero else b_dot
    if type(a_dot) is not Zero:
        k = -1 if unit_diagonal else 0
        a_dot_used = _tril(a_dot, k) if lower else _triu(a_dot, -k)
        rhs = ad.add_tangents(rhs, lax.neg(_mm(_op(a_dot_used, transpose_a), x)))
    if type(rhs) is Zero:
        return x, rhs
    return x, triangular_solve_p.bind(a, rhs, **params)


def _triangular_solve_transpose(ct, a, b, *, lower, transpose_a, unit_diagonal):
    if is_undefined(a):
        raise NotImplementedError("triangular_solve is linear only in b; its transpose w.r.t. a is undefined")
    if type(ct) is Zero:
        return [None, None]
    return [None, triangular_solve_p.bind(a, ct, lower=lower, transpose_a=not transpose_a, unit_diagonal=unit_diagonal)]


jvp_rules[triangular_solve_p] = _triangular_solve_jvp
ad.deftranspose(triangular_solve_p, _triangular_solve_transpose)
_leading_batcher(triangular_solve_p)
# (its eager cotangent rule, NumPy: ``linalg_eager.py``, for this module's line budget)


# --- lu ------------------------------------------------------------------------------------------

lu_p = Primitive("lu", multiple_results=True)


@lu_p.def_impl
def _lu_impl(a):
    a = np.asarray(a)
    n, batch = a.shape[-1], a.shape[:-2]
    lu = np.array(a.reshape((int(np.prod(batch, dtype=np.int64)), n, n)), copy=True)
    rows = np.arange(lu.shape[0])
    pivots = np.zeros(lu.shape[:1] + (n,), INDEX_DTYPE)
    perm = np.broadcast_to(np.arange(n, dtype=INDEX_DTYPE), pivots.shape).copy()
    for k in range(n):
        # The first entry of largest magnitude is the pivot (LAPACK's idamax).
        p = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
        pivots[:, k] = p
        lu[rows, k], lu[rows, p] = lu[rows, p], lu[rows, k].copy()
        perm[rows, k], perm[rows, p] = perm[rows, p], perm[rows, k].copy()
        if k + 1 < n:
            piv = lu[:, k, k:k + 1]
            # A zero pivot means the whole column below is zero: leave it (singular U).
            np.divide(lu[:, k + 1:, k], piv, out=lu[:, k + 1:, k], where=piv != 0)
            lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k:k + 1] * lu[:, k:k + 1, k + 1:]
    return [lu.reshape(a.shape), pivots.reshape(batch + (n,)), perm.reshape(batch + (n,))]


@lu_p.def_abstract_eval
def _lu_abstract_eval(a):
    _check_matrix("lu", a, kinds="fc")  # (complex: P A = L U is rational in A, so the rules hold)
    idx = ShapedArray(a.shape[:-1], INDEX_DTYPE, False)
    return [a.strip_weak_type(), idx, idx]


def _lu_jvp(primals, tangents):
    # P A = L U  =>  L^-1 P dA U^-1 = L^-1 dL + dU U^-1 (strictly lower + upper), so with
    # Phi = L^-1 P dA U^-1: dL = L tril(Phi, -1), dU = triu(Phi) U.
    (a,), (a_dot,) = primals, tangents
    lu, pivots, perm = lu_p.bind(a)
    zeros = [Zero.like(pivots), Zero.like(perm)]
    if type(a_dot) is Zero:
        return [lu, pivots, perm], [Zero.like(lu)] + zeros
    pa_dot = _mm(permutation_matrix(perm, _aval(a).dtype), a_dot)
    x = triangular_solve(lu, pa_dot, lower=True, unit_diagonal=True)
    phi = _right_solve_upper(x, lu)
    l = lax.add(_tril(lu, -1), _eye_like(lu))
    lu_dot = lax.add(_mm(l, _tril(phi, -1)), _mm(_triu(phi), _triu(lu)))
    return [lu, pivots, perm], [lu_dot] + zeros


jvp_rules[lu_p] = _lu_jvp
ad.nonlinear(lu_p)
_leading_batcher(lu_p)


# --- eigh ----------------------------------------------------------------------------------------

eigh_p = Primitive("eigh", multiple_results=True)


@eigh_p.def_impl
def _eigh_impl(a, *, lower=True):
    w, v = _nan_where_lapack_fails(lambda m: np.linalg.eigh(m, UPLO="L" if lower else "U"), np.asarray(a))
    return [w, v]


@eigh_p.def_abstract_eval
def _eigh_abstract_eval(a, *, lower=True):
    _check_matrix("eigh", a, kinds="fc")  # (Hermitian: the eigenvalues are real)
    return [ShapedArray(a.shape[:-1], dtypes.real_dtype(a.dtype), False), a.strip_weak_type()]


def _eigh_jvp(primals, tangents, *, lower=True):
    # A V = V diag(w), V^H V = I  =>  with S = V^H dA V: dw = Re diag(S), dV = V (F o S),
    # F[i, j] = 1 / (w[j] - w[i]) off the diagonal (distinct eigenvalues assumed). As
    # JAX's: diag(V^H dV) = 0 fixes each eigenvector's phase (the gauge).
    (a,), (a_dot,) = primals, tangents
    w, v = eigh_p.bind(a, lower=lower)
    if type(a_dot) is Zero:
        return [w, v], [Zero.like(w), Zero.like(v)]
    s = _mm(_mH(v), _mm(_symmetrize_from(a_dot, lower), v))
    shape = _aval(v).shape
    w_diff = lax.sub(_rows(w, shape), _cols(w, shape))  # (real)
    f = _pair_inverse(w_diff, w_diff)
    w_dot = lax.real(_diag(s)) if _is_complex(s) else _diag(s)
    return [w, v], [w_dot, _mm(v, lax.mul(_cast_like(f, v), s))]


jvp_rules[eigh_p] = _eigh_jvp
ad.nonlinear(eigh_p)
_leading_batcher(eigh_p)


# --- qr ------------------------------------------------------------------------------------------

qr_p = Primitive("qr", multiple_results=True)


@qr_p.def_impl
def _qr_impl(a):
    q, r = np.linalg.qr(np.asarray(a), mode="reduced")
    return [q, r]


@qr_p.def_abstract_eval
def _qr_abstract_eval(a):
    _check_matrix("qr", a, square=False, kinds="fc")
    *batch, m, n = a.shape
    k = min(m, n)
    return [ShapedArray(tuple(batch) + (m, k), a.dtype, False), ShapedArray(tuple(batch) + (k, n), a.dtype, False)]


def _qr_tall_tangents(q, r, a_dot):
    """(dQ, dR) for A = Q R with m >= n and R invertible: C = Q^H dA R^-1 and Omega
    the anti-Hermitian part built from C's strict lower triangle (Q^H dQ = Omega). For
    complex input Omega also gets i Im diag(C), as JAX's: R's diagonal stays real."""
    a_dot_rinv = _right_solve_upper(a_dot, r)
    c = _mm(_mH(q), a_dot_rinv)
    c_low = _tril(c, -1)
    omega = lax.sub(c_low, _mH(c_low))
    if _is_complex(c):
        omega = lax.add(omega, lax.mul(lax.sub(c, _real_part(c)), _eye_like(c)))
    q_dot = lax.add(_mm(q, lax.sub(omega, c)), a_dot_rinv)
    r_dot = _mm(lax.sub(c, omega), r)
    return q_dot, r_dot


def _qr_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    q, r = qr_p.bind(a)
    if type(a_dot) is Zero:
        return [q, r], [Zero.like(q), Zero.like(r)]
    shape = _aval(a).shape
    m, n = shape[-2:]
    if m >= n:
        return [q, r], list(_qr_tall_tangents(q, r, a_dot))
    # Wide: A = [X | Y] with Q R_X = X (Q depends on X only) and R = [R_X | Q^T Y].
    def left(x):  # the first m columns
        return lax.slice(x, (0,) * len(shape), _aval(x).shape[:-1] + (m,))

    def right(x):  # the remaining n - m columns
        return lax.slice(x, (0,) * (len(shape) - 1) + (m,), _aval(x).shape)

    q_dot, rx_dot = _qr_tall_tangents(q, left(r), left(a_dot))
    ry_dot = lax.add(_mm(_mH(q_dot), right(a)), _mm(_mH(q), right(a_dot)))
    return [q, r], [q_dot, lax.concatenate([rx_dot, ry_dot], len(shape) - 1)]


jvp_rules[qr_p] = _qr_jvp
ad.nonlinear(qr_p)
_leading_batcher(qr_p)


# --- svd -----------------------------------------------------------------------------------------

svd_p = Primitive("svd", multiple_results=True)


@svd_p.def_impl
def _svd_impl(a, *, full_matrices=False, compute_uv=True):
    a = np.asarray(a)
    if not compute_uv:
        return [_nan_where_lapack_fails(lambda m: np.linalg.svd(m, compute_uv=False), a)]
    u, s, vt = _nan_where_lapack_fails(lambda m: tuple(np.linalg.svd(m, full_matrices=full_matrices)), a)
    return [u, s, vt]


@svd_p.def_abstract_eval
def _svd_abstract_eval(a, *, full_matrices=False, compute_uv=True):
    _check_matrix("svd", a, square=False, kinds="fc")
    *batch, m, n = a.shape
    batch, k = tuple(batch), min(m, n)
    s = ShapedArray(batch + (k,), dtypes.real_dtype(a.dtype), False)
    if not compute_uv:
        return [s]
    cu, rv = (m, n) if full_matrices else (k, k)
    return [ShapedArray(batch + (m, cu), a.dtype, False), s, ShapedArray(batch + (rv, n), a.dtype, False)]


def _svd_jvp(primals, tangents, *, full_matrices=False, compute_uv=True):
    # A = U S V^H, dP = U^H dA V: ds = Re diag(dP); U^H dU = F o (dP S + S dP^H) and
    # V^H dV = F o (S dP + dP^H S) with F[i, j] = 1/(s_j^2 - s_i^2) off the diagonal;
    # the parts of dU (dV) outside span(U) (span(V)) are (I - U U^H) dA V S^-1 (resp.).
    # Complex (JAX's gauge): diag(V^H dV) = 0 and diag(U^H dU) = i Im diag(dP) / s.
    (a,), (a_dot,) = primals, tangents
    shape = _aval(a).shape
    m, n = shape[-2:]
    params = dict(full_matrices=full_matrices, compute_uv=compute_uv)
    if full_matrices and compute_uv and m != n:
        outs = svd_p.bind(a, **params)
        if type(a_dot) is Zero:
            return outs, [Zero.like(o) for o in outs]
        raise NotImplementedError(
            f"svd: the derivative of U/Vt with full_matrices=True is not unique for a non-square "
            f"matrix ({_aval(a).str_short()}); use full_matrices=False"
        )
    u, s, vt = svd_p.bind(a, full_matrices=False, compute_uv=True)
    outs = [u, s, vt] if compute_uv else [s]
    if type(a_dot) is Zero:
        return outs, [Zero.like(o) for o in outs]
    v = _mH(vt)
    dp = _mm(_mH(u), _mm(a_dot, v))
    s_dot = lax.real(_diag(dp)) if _is_complex(dp) else _diag(dp)
    if not compute_uv:
        return outs, [s_dot]
    kshape = _aval(dp).shape
    s_row, s_col = _rows(s, kshape), _cols(s, kshape)  # (real)
    s_diff = lax.sub(lax.mul(s_row, s_row), lax.mul(s_col, s_col))
    f = _cast_like(_pair_inverse(s_diff, s_diff), dp)
    s_row, s_col = _cast_like(s_row, dp), _cast_like(s_col, dp)
    dp_s, s_dp = lax.mul(dp, s_row), lax.mul(s_col, dp)
    uh_du = lax.mul(f, lax.add(dp_s, _mH(dp_s)))
    if _is_complex(dp):
        uh_du = lax.add(uh_du, lax.div(lax.mul(lax.sub(dp, _real_part(dp)), _eye_like(dp)), s_row))
    u_dot = _mm(u, uh_du)
    v_dot = _mm(v, lax.mul(f, lax.add(s_dp, _mH(s_dp))))
    if m > n:
        extra = lax.sub(_mm(a_dot, v), _mm(u, dp))
        u_dot = lax.add(u_dot, lax.div(extra, _cast_like(_rows(s, _aval(extra).shape), extra)))
    if n > m:
        extra = lax.sub(_mm(_mH(a_dot), u), _mm(v, _mH(dp)))
        v_dot = lax.add(v_dot, lax.div(extra, _cast_like(_rows(s, _aval(extra).shape), extra)))
    return outs, [u_dot, s_dot, _mH(v_dot)]


jvp_rules[svd_p] = _svd_jvp
ad.nonlinear(svd_p)
_leading_batcher(svd_p)


# --- one-line functions (re-exported by lax_api) ------------------------------------------

def cholesky(a):
    """Lower Cholesky factor of (a stack of) SPD matrices; reads the lower triangle."""
    return cholesky_p.bind(a)


def triangular_solve(a, b, *, lower: bool = True, transpose_a: bool = False, unit_diagonal: bool = False):
    """Solve ``op(A) X = B`` (``op(A) = A.T`` if ``transpose_a``), reading one triangle of A."""
    return triangular_solve_p.bind(
        a, b, lower=bool(lower), transpose_a=bool(transpose_a), unit_diagonal=bool(unit_diagonal)
    )


def lu(a):
    """``(lu, pivots, permutation)`` with ``A[..., permutation, :] = L @ U``."""
    return tuple(lu_p.bind(a))


def eigh(a, *, lower: bool = True):
    """``(w, V)`` of a symmetric matrix read from one triangle; ``w`` ascending."""
    return tuple(eigh_p.bind(a, lower=bool(lower)))


def qr(a):
    """Reduced QR: ``(Q, R)`` with Q (..., m, k), R (..., k, n), k = min(m, n)."""
    return tuple(qr_p.bind(a))


def svd(a, *, full_matrices: bool = False, compute_uv: bool = True):
    """``(U, s, Vt)`` (s descending), or just ``s`` when ``compute_uv=False``."""
    outs = svd_p.bind(a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    return tuple(outs) if compute_uv else outs[0]


from funcgrad.core import lax_api as lax  # noqa: E402  (bottom: lax_api needs the primitives above)
