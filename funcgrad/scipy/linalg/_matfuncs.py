"""Matrix functions: ``expm`` (scaling and squaring with Padé approximants, Higham 2005,
as SciPy and JAX), its Fréchet derivative ``expm_frechet``, and ``sqrtm``.

Derivatives:

- ``expm``: differentiating the scaling-and-squaring algorithm itself (the Padé
  degree and the number of squarings are piecewise constant in ``A``) gives exactly
  Al-Mohy and Higham's (2009) Fréchet-derivative algorithm, SciPy's
  ``expm_frechet(method='SPS')``: forward and reverse mode, any order. (JAX instead
  takes the upper-right block of ``expm([[A, E], [0, A]])``; that is
  ``expm_frechet(method='blockEnlarge')`` here. A rule built on it would not be linear
  in ``E`` to the transposer, which reverse mode needs.)
- ``sqrtm``: ``X = sqrtm(A)`` gives ``X dX + dX X = dA``, a Sylvester equation solved as
  an ``n^2 x n^2`` linear system (fine for the small matrices ``sqrtm`` is used on).
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.numpy_api._util import aval_of, shape_of
from funcgrad.scipy.linalg import _util as U
from funcgrad.transforms.ad_api import jvp
from funcgrad.transforms.batching import vmap
from funcgrad.transforms.custom import custom_jvp

# Padé numerator coefficients b_0..b_m (the denominator has the same with odd terms negated).
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0,
        3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
# Largest 1-norms for which each degree meets the unit roundoff (Higham 2005, Table 2.3;
# float32 uses degrees 3, 5, 7 only, with single-precision bounds, as JAX).
_THETA = {
    np.dtype(np.float64): ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
                           (9, 2.097847961257068e0), (13, 5.371920351148152e0)),
    np.dtype(np.float32): ((3, 4.258730016922831e-1), (5, 1.880152677804762e0), (7, 3.925724783138660e0)),
}


def _pade(m):
    """(U, V) with expm(A) ~ (V - U)^-1 (V + U): U holds the odd, V the even terms."""
    b = _PADE[m]

    def uv(a):
        eye = np.eye(shape_of(a)[-1], dtype=aval_of(a).dtype)
        a2 = a @ a
        if m < 13:
            powers = [eye, a2]
            for _ in range(2, m // 2 + 1):
                powers.append(powers[-1] @ a2)
            u = a @ sum(b[2 * k + 1] * p for k, p in enumerate(powers))
            v = sum(b[2 * k] * p for k, p in enumerate(powers))
            return u, v
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
        return u, v

    return uv


def _expm_one(a, max_squarings):
    """expm of one matrix: scale by 2^-s so the lowest adequate degree applies, square s times."""
    dt = aval_of(a).dtype
    thetas = _THETA[np.dtype(dt) if dt.kind == "f" else np.finfo(dt).dtype]  # (complex: its parts' bounds)
    norm = fnp.max(fnp.sum(fnp.abs(a), axis=0))  # the 1-norm
    s = fnp.maximum(0.0, fnp.ceil(fnp.log2(norm / thetas[-1][1])))
    too_many = ~(s <= max_squarings)  # also NaN/inf entries
    s = fnp.where(too_many, 0.0, s)
    a = a / fnp.exp2(s).astype(dt)
    index = sum((norm / fnp.exp2(s) > t).astype(np.int32) for _, t in thetas[:-1])
    u, v = lax.switch(index, [_pade(m) for m, _ in thetas], a)
    r = fnp.linalg.solve(v - u, v + u)
    _, r = lax.while_loop(lambda c: c[0] < s.astype(np.int32), lambda c: (c[0] + 1, c[1] @ c[1]), (np.int32(0), r))
    return fnp.where(too_many, np.asarray(np.nan, dt), r)


def _expm_impl(a, max_squarings):
    batch = shape_of(a)[:-2]
    if not batch:
        return _expm_one(a, max_squarings)
    flat = fnp.reshape(a, (-1,) + shape_of(a)[-2:])
    return fnp.reshape(vmap(lambda m: _expm_one(m, max_squarings))(flat), shape_of(a))


def _block(a, e):
    """[[a, e], [0, a]] over leading batch dims."""
    top = fnp.concatenate([a, e], axis=-1)
    bottom = fnp.concatenate([fnp.zeros_like(a), a], axis=-1)
    return fnp.concatenate([top, bottom], axis=-2)


def expm(A, *, upper_triangular=False, max_squarings=16):
    """Matrix exponential of (a stack of) square matrices. Scaling and squaring with
    Padé approximants of degree 3-13 chosen by the 1-norm (Higham 2005). More than
    ``max_squarings`` squarings needed (or non-finite input) gives NaN, as in JAX.
    ``upper_triangular`` is accepted for JAX compatibility (the result is the same).

    >>> expm(np.zeros((2, 2)))
    Array([[1., 0.],
           [0., 1.]])
    """
    return _expm_impl(U.matrix("expm", A, "A"), int(max_squarings))


def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """Fréchet derivative of ``expm`` at ``A`` in direction ``E``: ``(expm(A), L)`` or
    ``L`` alone (``compute_expm=False``). ``method=None``/``'SPS'``: the derivative of
    the scaling-and-squaring algorithm (Al-Mohy and Higham 2009, as SciPy's default);
    ``'blockEnlarge'``: the upper-right block of ``expm([[A, E], [0, A]])``."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: method must be None, 'SPS' or 'blockEnlarge', got {method!r}")
    a = U.matrix("expm_frechet", A, "A")
    e = U.matrix("expm_frechet", E, "E")
    if shape_of(a) != shape_of(e):
        raise ValueError(f"expm_frechet: A and E must have the same shape, got A {shape_of(a)} and E {shape_of(e)}")
    a, e = U.promote("expm_frechet", a, e)
    if method == "blockEnlarge":
        n = shape_of(a)[-1]
        big = _expm_impl(_block(a, e), 16)
        expm_a, frechet = big[..., :n, :n], big[..., :n, n:]
    else:
        expm_a, frechet = jvp(lambda x: _expm_impl(x, 16), (a,), (e,))
    return (expm_a, frechet) if compute_expm else frechet


# --- sqrtm ------------------------------------------------------------------------------
def _sqrtm_impl(a):
    """Denman-Beavers iteration with determinant scaling: Y -> sqrt(A), Z -> A^-1/2."""
    dt = aval_of(a).dtype
    n = shape_of(a)[-1]
    eps = float(np.finfo(dt).eps)

    def body(state):
        k, y, z, _ = state
        log_scale = -(fnp.linalg.slogdet(y)[1] + fnp.linalg.slogdet(z)[1]) / (2 * n)
        mu = fnp.exp(fnp.where(k < 6, log_scale, 0.0))[..., None, None].astype(dt)  # scale early steps only
        y, z = mu * y, mu * z
        y_new = 0.5 * (y + fnp.linalg.inv(z))
        z_new = 0.5 * (z + fnp.linalg.inv(y))
        change = fnp.max(fnp.abs(y_new - y)) / fnp.maximum(fnp.max(fnp.abs(y_new)), eps)
        return k + 1, y_new, z_new, change

    def cond(state):
        k, _, _, change = state
        return (k < 60) & (change > 10 * eps)

    init = (np.int32(0), a, U.eye_like(a), np.asarray(np.inf, np.finfo(dt).dtype))  # (change is real)
    _, y, _, _ = lax.while_loop(cond, body, init)
    # A negative real eigenvalue (no real square root) leaves the iteration unconverged.
    scale = fnp.maximum(fnp.max(fnp.abs(a), axis=(-2, -1)), eps)
    resid = fnp.max(fnp.abs(y @ y - a), axis=(-2, -1)) / scale
    bad = ~(resid <= 1e3 * np.sqrt(eps))
    return fnp.where(bad[..., None, None], np.asarray(np.nan, dt), y)


_sqrtm = custom_jvp(_sqrtm_impl)


@_sqrtm.defjvp
def _sqrtm_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    x = _sqrtm(a)
    shape = shape_of(x)
    n, batch = shape[-1], shape[:-2]
    eye = np.eye(n, dtype=aval_of(x).dtype)
    # (X dX + dX X)[i, j] = sum_kl K[i, j, k, l] dX[k, l], K = X[i,k] I[j,l] + I[i,k] X[l,j]
    kron = x[..., :, None, :, None] * eye[None, :, None, :] + eye[:, None, :, None] * U.mT(x)[..., None, :, None, :]
    kron = fnp.reshape(kron, batch + (n * n, n * n))
    x_dot = fnp.linalg.solve(kron, fnp.reshape(a_dot, batch + (n * n, 1)))
    return x, fnp.reshape(x_dot, shape)


def sqrtm(A, blocksize=1):
    """Principal square root of (a stack of) real matrices with a *real* principal root,
    i.e. no eigenvalue on the closed negative real axis (SciPy and JAX return complex
    results otherwise; funcgrad has no complex dtype: those matrices give NaN). Computed
    by the scaled Denman-Beavers iteration, so it needs ``A`` reasonably conditioned
    (iterates invert ``A``); ``blocksize`` is accepted for SciPy compatibility."""
    with np.errstate(all="ignore"):  # an unconverged iterate may overflow on its way to NaN
        return _sqrtm(U.matrix("sqrtm", A, "A"))
