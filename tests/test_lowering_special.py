"""Special functions in compiled code (funcgrad/lowering/special.py): ``fg.jit(f)(x)``
equals eager ``f(x)`` for erf, erfc, erfinv, gammaln, digamma and polygamma, and every
program here compiles natively (no interpreter fallback).

Tolerances (see the module docstring of funcgrad/lowering/special.py for why):
- erf/erfc: bitwise (both call the C library's erf/erfc);
- elsewhere 1e-14 relative in float64; where both use the same power series (lgamma
  near 1 and 2, digamma near its positive root) bitwise;
- for x < 0, lgamma/digamma/polygamma come from a reflection formula that cancels near
  their negative roots, so there the error is relative to the size of the cancelled
  terms, ``|f(x)| + |f(1 - x)|``, not to ``|f(x)|``;
- float32 computes in float64 and rounds once, like the impls: one float32 ulp at most.
"""
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import special as fsp

inf, nan = np.inf, np.nan
RNG = np.random.default_rng(6)
F32_ULP = 2.0 ** -23


def quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


def jit_native(f, *args):
    """``fg.jit(f)(*args)``, after checking that it compiled to native code."""
    jitted = fg.jit(f)
    text = quiet(lambda: jitted.lower(*args).as_text())
    assert "; not compiled" not in text, text.split("; not compiled")[1].splitlines()[0]
    return quiet(jitted, *args)


def assert_match(got, want, rtol=1e-14, scale=None):
    """Same dtype, shape, NaNs, infinities and signed zeros; finite values within
    ``rtol * scale`` (``scale`` defaults to ``|want|``; rtol 0: bitwise)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    special = np.isinf(want) | (want == 0)
    np.testing.assert_array_equal(got[special], want[special])
    np.testing.assert_array_equal(np.signbit(got[special]), np.signbit(want[special]))
    ok = np.isfinite(want) & ~special
    scale = np.abs(want) if scale is None else np.broadcast_to(scale, want.shape)
    err = np.abs(got[ok].astype(np.float64) - want[ok])
    bound = rtol * scale[ok]
    bad = err > bound
    assert not bad.any(), f"{bad.sum()} elements off, e.g. x index {np.flatnonzero(ok)[bad][:5]}: err {err[bad][:5]} > {bound[bad][:5]}"


def check(f, x, rtol=1e-14, reflect=False, bitwise_where=None):
    """jit(f)(x) vs f(x) in float64 and float32; ``reflect``: negative x are measured
    against ``|f(x)| + |f(1 - x)|``; ``bitwise_where(x)``: a mask that must match exactly."""
    x = np.asarray(x, np.float64)
    want, got = quiet(f, x), jit_native(f, x)
    scale = np.abs(want)
    if reflect:
        scale = np.where(x < 0, np.abs(want) + np.abs(quiet(f, 1.0 - x)), scale)
    assert_match(got, want, rtol, scale)
    if bitwise_where is not None:
        m = bitwise_where(x)
        np.testing.assert_array_equal(got[m], want[m])
    x32 = quiet(x.astype, np.float32)  # overflows to +-inf: fine
    assert_match(jit_native(f, x32), quiet(f, x32), F32_ULP)


# --- grids ------------------------------------------------------------------------------------
SPECIALS = np.array([0.0, -0.0, inf, -inf, nan, 5e-324, -5e-324, 1e-300, -1e-300, 1e300, -1e300])
WIDE = np.concatenate([RNG.normal(size=400) * 5, RNG.uniform(-60, 60, 400),
                       np.geomspace(1e-300, 1e300, 120), -np.geomspace(1e-300, 1e300, 120), SPECIALS])
POLES = -np.arange(0.0, 40.0)  # 0, -1, -2, ...
NEG_NON_INT = np.concatenate([(-np.arange(0, 60) - RNG.uniform(0.001, 0.999, (4, 60))).ravel(),
                              -np.arange(0, 60) - 0.5, -np.arange(1, 60) + 1e-9, -np.arange(1, 60) - 1e-9])
# digamma's negative roots and lgamma's first negative roots, to a few digits: inputs next
# to them exercise the cancellation in the reflection formula
NEAR_NEG_ROOTS = np.concatenate([r + np.linspace(-1e-6, 1e-6, 21) for r in
                                 (-0.5040830082644554, -1.5734984731623, -2.6107208684441,
                                  -2.457024738220800, -2.747682646727412, -3.143580888325)])


def test_erf_and_erfc_bitwise():
    x = np.concatenate([WIDE, np.linspace(-30, 30, 601), np.geomspace(1e-320, 1e-5, 50)])
    for f in (fsp.erf, fsp.erfc):
        check(f, x, rtol=0.0)
        np.testing.assert_array_equal(jit_native(f, x), quiet(f, x))


def test_erfinv():
    tails = 1.0 - np.geomspace(1e-16, 0.5, 200)
    x = np.concatenate([RNG.uniform(-1, 1, 1000), tails, -tails, np.linspace(-0.6, 0.6, 241),
                        np.geomspace(1e-320, 1e-3, 60), [1.0, -1.0, 0.5, -0.5, 1 + 2e-16, -1.5, 3.0],
                        SPECIALS])
    check(fsp.erfinv, x)
    got = jit_native(fsp.erfinv, np.array([1.0, -1.0, 0.0, -0.0, 1.5, -inf, nan]))
    np.testing.assert_array_equal(got, [inf, -inf, 0.0, -0.0, nan, nan, nan])
    assert np.signbit(got[3])


def test_gammaln():
    x = np.concatenate([WIDE, RNG.uniform(0, 30, 400), 1 + RNG.uniform(-0.5, 0.5, 200),
                        2 + RNG.uniform(-0.7, 0.7, 200), [0.6, 1.4, 1.4 + 1e-15, 2.6, 1.0, 2.0],
                        NEG_NON_INT, NEAR_NEG_ROOTS, POLES, [1e305, 2.5e305, 1.7976931348623157e308]])
    near_series = lambda v: (np.abs(v - 1) < 0.4) | (np.abs(v - 2) < 0.6)  # noqa: E731
    check(fsp.gammaln, x, reflect=True, bitwise_where=near_series)
    got = jit_native(fsp.gammaln, np.concatenate([POLES, [-0.0, inf, -inf, 1e308, nan]]))
    np.testing.assert_array_equal(got, [inf] * (len(POLES) + 4) + [nan])


def test_digamma():
    root = 1.4616321449683622
    x = np.concatenate([WIDE, RNG.uniform(0, 30, 400), root + RNG.uniform(-0.3, 0.3, 200),
                        root + np.arange(-20, 21) * 2.2e-16, NEG_NON_INT, NEAR_NEG_ROOTS, POLES])
    check(fsp.digamma, x, reflect=True, bitwise_where=lambda v: np.abs(v - root) < 0.24)
    got = jit_native(fsp.digamma, np.array([0.0, -0.0, -1.0, -7.0, -inf, inf, nan]))
    np.testing.assert_array_equal(got, [-inf, inf, nan, nan, nan, inf, nan])


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_polygamma(n):
    x = np.concatenate([WIDE, RNG.uniform(0, 30, 300), np.geomspace(1e-8, 1e3, 60), NEG_NON_INT,
                        NEAR_NEG_ROOTS, POLES])
    f = lambda v: fsp.polygamma(n, v)  # noqa: E731
    check(f, x, reflect=True)
    pole = inf if n % 2 else -inf  # (-1)^(n+1) inf
    got = jit_native(f, np.array([0.0, -0.0, -1.0, -4.0, inf, -inf, nan]))
    np.testing.assert_array_equal(got, [pole, pole, pole, pole, 0.0, nan, nan])


def test_polygamma_with_an_array_of_orders():
    n = np.array([[0], [1], [2], [5]])
    x = RNG.uniform(-5, 5, 6)
    f = lambda v: fsp.polygamma(n, v)  # noqa: E731
    assert_match(jit_native(f, x), quiet(f, x), scale=np.abs(quiet(f, x)) + np.abs(quiet(f, 1 - x)))


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "gammaln", "digamma", "polygamma"])
@pytest.mark.parametrize("x", [np.float64(0.3), np.float32(-0.7), np.zeros((0,)), np.zeros((2, 0, 3), np.float32),
                               np.array(0.25)], ids=["0d", "0d_f32", "empty", "empty_3d_f32", "0d_array"])
def test_shapes(name, x):
    f = (lambda v: fsp.polygamma(2, v)) if name == "polygamma" else getattr(fsp, name)
    want = np.asarray(quiet(f, x))
    got = np.asarray(jit_native(f, x))
    assert_match(got, want, rtol=F32_ULP if want.dtype == np.float32 else 1e-14)


def test_fused_expression_with_broadcasting():
    def f(x, y):
        return fsp.erf(x) * 2.0 + fsp.gammaln(y) - fsp.digamma(y) * fsp.polygamma(1, x + 3.0) + fsp.erfinv(x / 4.0)

    def size_of_terms(x, y):  # the sum may cancel: errors are relative to its terms
        return (np.abs(fsp.erf(x) * 2.0) + np.abs(fsp.gammaln(y)) + np.abs(fsp.digamma(y) * fsp.polygamma(1, x + 3.0))
                + np.abs(fsp.erfinv(x / 4.0)))

    x, y = RNG.uniform(-2, 2, (3, 1)), RNG.uniform(0.1, 9, (4,))
    assert_match(jit_native(f, x, y), f(x, y), scale=size_of_terms(x, y))
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    assert_match(jit_native(f, x32, y32), f(x32, y32), rtol=4 * F32_ULP, scale=size_of_terms(x32, y32))


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "gammaln", "digamma", "polygamma1", "polygamma3"])
def test_grad_compiles_natively(name):
    special = {"polygamma1": lambda v: fsp.polygamma(1, v), "polygamma3": lambda v: fsp.polygamma(3, v)}.get(
        name, getattr(fsp, name, None))
    x = RNG.uniform(-0.9, 0.9, 7) if name == "erfinv" else np.concatenate([RNG.uniform(0.1, 8, 6), [-2.25, -0.75]])
    g = fg.grad(lambda v: fnp.sum(special(v)))
    want = quiet(g, x)
    scale = np.abs(want) + np.abs(quiet(g, 1.0 - x)) if name != "erfinv" else None  # reflection at x < 0
    assert_match(jit_native(g, x), want, rtol=1e-14, scale=scale)
