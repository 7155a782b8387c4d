"""Native lowering of the linear-algebra primitives (funcgrad/lowering/linalg.py).

Each check compiles ``fg.make_jaxpr(f)(*args)`` with ``compile_jaxpr`` and compares
the native result with the eager one (the primitives' NumPy impls).

Tolerances (measured on the development machine: every primitive came out bitwise
equal to its impl, float64 and float32, because the compiled code makes the same
LAPACK calls NumPy makes, and ``lu`` replays the impl's elimination op for op):
- the primitives themselves: 1e-12 relative, pivots and permutations exactly;
- fnp.linalg composites (det, slogdet, ...) also contain reductions, which compiled
  code reassociates (largest differences seen: 9e-16 in float64, 9e-8 in float32):
  1e-12 relative in float64, 1e-5 in float32.

Failures that NumPy reports with LinAlgError give NaNs in compiled code (JAX's
convention), checked at the end.
"""
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lowering.linalg  # noqa: F401  (registers the rules until funcgrad.lowering imports it)
import funcgrad.numpy as fnp
from funcgrad.core.primitive import ALLOWED_MISSING
from funcgrad.core.prims import linalg as la
from funcgrad.core.pytree import tree_flatten
from funcgrad.lowering import compile_jaxpr

# Until funcgrad/lowering/pending.py drops its linalg entries, importing the rules makes
# them stale allow-list entries (test_rule_coverage); they are not missing any more.
for _name in ("cholesky", "triangular_solve", "lu", "eigh", "qr", "svd"):
    ALLOWED_MISSING["lower"].pop(_name, None)

RNG = np.random.default_rng(42)
DTYPES = [np.float64, np.float32]
SIZES = [1, 2, 3, 4, 5, 6, 64]
BATCHES = [(), (2,), (2, 3)]


def _batches(n):
    return BATCHES if n <= 6 else [(), (2,)]


def compiled_vs_eager(f, *args, rtol=1e-12, atol=0.0):
    """compile(make_jaxpr(f))(*args) == f(*args) leaf by leaf; returns the compiled outputs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        closed = fg.make_jaxpr(f)(*args)
        got = compile_jaxpr(closed)(*args)
        want, _ = tree_flatten(f(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)
    return got


def rand(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def spd(shape, dtype):
    a = RNG.standard_normal(shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def well_conditioned(shape, dtype):
    n = shape[-1]
    return (RNG.standard_normal(shape) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)


def comp_rtol(dtype):
    return 1e-12 if np.dtype(dtype) == np.float64 else 1e-5


ids_dt = lambda d: np.dtype(d).name  # noqa: E731


# --- the primitives --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dt)
@pytest.mark.parametrize("n", SIZES)
def test_cholesky(dtype, n):
    for batch in _batches(n):
        compiled_vs_eager(la.cholesky, spd(batch + (n, n), dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dt)
@pytest.mark.parametrize("n", SIZES)
def test_triangular_solve(dtype, n):
    a, ab = well_conditioned((n, n), dtype), well_conditioned((2, n, n), dtype)
    b, bb = rand((n, 1), dtype), rand((2, n, 3), dtype)  # one right-hand side (trsv) / several (trsm)
    for lower in (True, False):
        for transpose_a in (False, True):
            for unit in (False, True):
                f = lambda a, b: la.triangular_solve(a, b, lower=lower, transpose_a=transpose_a,  # noqa: E731
                                                     unit_diagonal=unit)
                compiled_vs_eager(f, a, b)
                compiled_vs_eager(f, ab, bb)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dt)
@pytest.mark.parametrize("n", SIZES)
def test_lu(dtype, n):
    for batch in _batches(n):
        compiled_vs_eager(la.lu, rand(batch + (n, n), dtype))
        # small integers: many exact ties and singular matrices; pivots must still agree
        compiled_vs_eager(la.lu, RNG.integers(-2, 3, batch + (n, n)).astype(dtype))


def test_lu_nan_and_zero_columns():
    a = RNG.integers(-2, 3, (4, 5, 5)).astype(np.float64)
    a[0, 2, 1] = np.nan
    a[1, :, 0] = 0.0
    a[2] = 0.0
    a[3, 3, 3] = np.inf
    compiled_vs_eager(la.lu, a)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dt)
@pytest.mark.parametrize("n", SIZES)
def test_eigh(dtype, n):
    for batch in _batches(n):
        a = rand(batch + (n, n), dtype)  # not symmetric: each triangle gives its own matrix
        compiled_vs_eager(lambda a: la.eigh(a, lower=True), a)
        compiled_vs_eager(lambda a: la.eigh(a, lower=False), a)


def _rect_shapes(n):
    return sorted({(n, n), (n + 2, n), (n, n + 3), (max(n - 1, 1), n)})


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dt)
@pytest.mark.parametrize("n", SIZES)
def test_qr(dtype, n):
    for i, mn in enumerate(_rect_shapes(n)):
        compiled_vs_eager(la.qr, rand(BATCHES[i % (3 if n <= 6 else 2)] + mn, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dt)
@pytest.mark.parametrize("n", SIZES)
def test_svd(dtype, n):
    for i, mn in enumerate(_rect_shapes(n)):
        x = rand(BATCHES[i % (3 if n <= 6 else 2)] + mn, dtype)
        compiled_vs_eager(lambda x: la.svd(x), x)
        compiled_vs_eager(lambda x: la.svd(x, full_matrices=True), x)
        compiled_vs_eager(lambda x: la.svd(x, compute_uv=False), x)


def test_empty_matrices():
    for f in (la.cholesky, la.lu, la.eigh, la.qr, la.svd, lambda x: la.svd(x, full_matrices=True)):
        compiled_vs_eager(f, np.zeros((2, 0, 0)))
    compiled_vs_eager(lambda x: la.svd(x, full_matrices=True), np.zeros((3, 0)))
    compiled_vs_eager(la.qr, np.zeros((0, 3)))


def test_fused_operand():
    # the decomposition's input is a fused (never materialised) expression
    a = rand((3, 4, 4), np.float64)
    compiled_vs_eager(lambda a: la.eigh(a * 2.0 + fnp.swapaxes(a, -1, -2)), a)
    compiled_vs_eager(lambda a: la.lu(fnp.swapaxes(a, -1, -2) - 1.0), a)


# --- fnp.linalg ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dt)
@pytest.mark.parametrize("n", SIZES)
def test_numpy_linalg(dtype, n):
    rtol = comp_rtol(dtype)
    for batch in _batches(n)[:2]:
        a = well_conditioned(batch + (n, n), dtype)
        s = spd(batch + (n, n), dtype)
        b = rand(batch + (n, 2), dtype)
        compiled_vs_eager(fnp.linalg.det, a, rtol=rtol)
        compiled_vs_eager(fnp.linalg.slogdet, a, rtol=rtol)
        compiled_vs_eager(fnp.linalg.inv, a, rtol=rtol)
        compiled_vs_eager(fnp.linalg.solve, a, b, rtol=rtol)
        compiled_vs_eager(fnp.linalg.cholesky, s, rtol=rtol)
        compiled_vs_eager(fnp.linalg.eigh, s, rtol=rtol)
        compiled_vs_eager(fnp.linalg.qr, rand(batch + (n + 1, n), dtype), rtol=rtol)
        compiled_vs_eager(fnp.linalg.svd, rand(batch + (n, n + 1), dtype), rtol=rtol)
        compiled_vs_eager(lambda x: fnp.linalg.norm(x, ord=2, axis=(-2, -1)), a, rtol=rtol)
    a = well_conditioned((n, n), dtype)
    compiled_vs_eager(fnp.linalg.solve, a, rand((n,), dtype), rtol=rtol)  # vector b
    compiled_vs_eager(lambda x: fnp.linalg.norm(x, ord=2), a, rtol=rtol)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids_dt)
@pytest.mark.parametrize("n", [1, 3, 6, 64])
def test_grad_slogdet(dtype, n):
    a = well_conditioned((n, n), dtype)
    g = fg.grad(lambda a: fnp.linalg.slogdet(a)[1])
    (got,) = compiled_vs_eager(g, a, rtol=comp_rtol(dtype))
    tol = 1e-10 if np.dtype(dtype) == np.float64 else 1e-4
    np.testing.assert_allclose(got, np.linalg.inv(a.astype(np.float64)).T, rtol=tol, atol=tol)


# --- failures give NaNs (JAX's convention) instead of LinAlgError ----------------------------------------
def _compile(f, *args):
    return compile_jaxpr(fg.make_jaxpr(f)(*args))


def test_cholesky_not_positive_definite_gives_nan():
    a = np.stack([np.eye(3), -np.eye(3)])
    np.testing.assert_array_equal(la.cholesky(a), _compile(la.cholesky, a)(a)[0])  # eager agrees
    (l,) = _compile(la.cholesky, a)(a)
    np.testing.assert_array_equal(l[0], np.eye(3))
    assert np.isnan(l[1]).all()


def test_singular_triangular_solve_gives_nan():
    a = np.stack([np.triu(np.ones((3, 3))), np.triu(np.ones((3, 3)))])
    a[1, 1, 1] = 0.0
    b = np.ones((2, 3, 2))
    for lower, transpose_a in ((False, False), (True, True)):
        f = lambda a, b: la.triangular_solve(a, b, lower=lower, transpose_a=transpose_a)  # noqa: E731
        (x,) = _compile(f, a, b)(a, b)
        np.testing.assert_array_equal(f(a, b), x)  # eager agrees
        np.testing.assert_array_equal(x[0], f(a[:1], b[:1])[0])
        assert np.isnan(x[1]).all()
    # a unit diagonal is never singular
    f = lambda a, b: la.triangular_solve(a, b, lower=False, unit_diagonal=True)  # noqa: E731
    compiled_vs_eager(f, a, b)


def test_non_finite_eigh_svd_give_nan():
    x = np.full((3, 3), np.nan)
    for f in (la.eigh, la.svd, lambda x: la.svd(x, compute_uv=False)):
        for out in _compile(f, x)(x):
            assert np.isnan(out).all()


def test_compiled_code_calls_lapack():
    exe = _compile(la.eigh, np.eye(3))
    assert "@fg_lapack_dsyevd" in exe.llvm_ir_unoptimized
    exe = _compile(lambda a: la.svd(a), np.ones((3, 2)))
    assert "@fg_lapack_dgesdd" in exe.llvm_ir_unoptimized


def test_missing_routine_raises_lowering_error(monkeypatch, fresh_disk_cache):  # (a cached qr links without the lookup)
    from funcgrad.errors import LoweringError
    from funcgrad.lowering import linalg as low

    lib, prefix, ity = low._library()
    monkeypatch.setitem(low._state, "lib", (lib, "no_such_prefix_", ity))
    monkeypatch.delitem(low._state, ("sym", "dgeqrf"), raising=False)
    x = rand((4, 3), np.float64)
    with pytest.raises(LoweringError, match="dgeqrf"):
        _compile(la.qr, x)
    q, r = fg.jit(la.qr)(x)  # jit falls back to the evaluator
    np.testing.assert_array_equal(q, la.qr(x)[0])
