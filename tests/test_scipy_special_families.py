"""The later funcgrad.scipy.special functions (wofz, dawsn, fresnel, expn, sici, spence,
owens_t, poch, gammasgn, loggamma, hyp1f1, hyp2f1, bessel_jn, sph_harm_y, bernoulli,
boxcox, boxcox1p) against scipy.special: random grids and edge values, float32, jit, and
derivatives against finite differences."""
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.scipy import special as fs
from funcgrad.test_util import check_grads

ss = pytest.importorskip("scipy.special")
RNG = np.random.default_rng(0)


def _scipy(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


def _close(got, want, rtol, atol=0.0):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def test_wofz():
    for scale in [0.01, 1.0, 5.0, 30.0, 1e3, 1e6]:
        z = (RNG.uniform(-1, 1, 400) + 1j * RNG.uniform(0, 1, 400)) * scale
        _close(fs.wofz(z), ss.wofz(z), rtol=1e-13)
        z = (RNG.uniform(-1, 1, 400) - 1j * RNG.uniform(0, 1, 400)) * min(scale, 20.0)
        _close(fs.wofz(z), ss.wofz(z), rtol=1e-11)  # (the reflection cancels below the axis, SciPy's too)
    x = np.array([0.0, 1.0, -2.0, 40.0])
    got = fs.wofz(x)
    assert got.dtype == np.complex128
    _close(got, ss.wofz(x), rtol=1e-14)
    assert fs.wofz(np.float32(1.0)).dtype == np.complex64


def test_dawsn_fresnel():
    x = np.r_[0.0, 1e-300, 1e-8, RNG.uniform(-12, 12, 2000), 0.999999, 1.0, 6.0, 6.0000001, 50.0, 1e5, 1e200,
              np.inf, -np.inf, np.nan]
    _close(fs.dawsn(x), ss.dawsn(x), rtol=1e-14)
    finite_sq = np.abs(x) != 1e200  # (SciPy: NaN once x^2 overflows; here the limits +-1/2)
    for got, want in zip(fs.fresnel(x), ss.fresnel(x)):
        _close(got[finite_sq], want[finite_sq], rtol=2e-12)  # (SciPy rounds pi x^2 / 2 for large x; here exact)
        assert got[~finite_sq] == 0.5
    small = np.r_[RNG.uniform(-3, 3, 200), 1e-100]
    for got, want in zip(fs.fresnel(small), ss.fresnel(small)):
        _close(got, want, rtol=1e-14)


def test_exponential_integrals():
    n = np.array([0, 1, 2, 3, 5, 10, 30, 200, 1000, 1.5, -1])[:, None]
    x = np.array([0.0, 1e-300, 1e-10, 0.01, 0.5, 1.0, 1.0001, 2.0, 5.0, 30.0, 700.0, 800.0, -1.0, np.inf])
    _close(fs.expn(n, x), _scipy(ss.expn, n, x), rtol=1e-14)
    x = np.r_[0.0, 1e-300, 1e-8, RNG.uniform(-30, 30, 2000), 4.0, 4.0000001, 1e5, 1e300, np.inf, -np.inf, np.nan]
    si, ci = fs.sici(x)
    want_si, want_ci = ss.sici(x)
    _close(si, want_si, rtol=1e-14)
    _close(ci, want_ci, rtol=1e-12, atol=1e-15)  # (relative error grows at Ci's zeros, as in any implementation)
    x = np.r_[0.0, 1e-300, 1e-8, RNG.uniform(0, 30, 2000), 0.5, 1.0, 1.5, 2.0, 1e10, 1e300, np.inf, -1.0, np.nan]
    _close(fs.spence(x), _scipy(ss.spence, x), rtol=1e-14, atol=1e-300)


def test_owens_t():
    h = np.r_[0.0, 1e-8, 0.5, 1.0, -2.0, 5.0, 8.0, 12.0, 20.0, 37.0, np.inf, RNG.uniform(-10, 10, 40)][:, None]
    a = np.r_[0.0, 0.3, -0.7, 1.0, 1.0000001, 2.0, -5.0, 30.0, 1e5, np.inf, RNG.uniform(-10, 10, 20)]
    _close(fs.owens_t(h, a), ss.owens_t(h, a), rtol=1e-12, atol=1e-300)
    # Tiny a: T = a exp(-h^2/2) / (2 pi) (1 - a^2 (h^2/2 + 1) / 3); SciPy loses digits there.
    h0, a0 = 5.0, 1e-6
    want = np.exp(-h0 * h0 / 2) / (2 * np.pi) * (a0 - a0**3 * (h0 * h0 / 2 + 1) / 3)
    _close(fs.owens_t(h0, a0), want, rtol=1e-14)


def test_gamma_relatives():
    z = np.array([-2.5, -2.0, -2.0, -3, -3, 0, 0, 1, -1.5, 2, np.inf, 3, -3, 3.5, -4.5, 10, 0.1, np.inf, np.inf])
    m = np.array([2.5, 1, 3, 4, 0.5, 2, 0, -1, -0.5, -2.5, 1, np.inf, -2, 2, 3, -3.5, 7.3, -1, 0])
    _close(fs.poch(z, m), _scipy(ss.poch, z, m), rtol=1e-13)
    zz = RNG.uniform(-10, 10, (2, 1000))
    _close(fs.poch(*zz), ss.poch(*zz), rtol=1e-12)
    zi = RNG.integers(-10, 10, (2, 1000)).astype(float)
    _close(fs.poch(*zi), _scipy(ss.poch, *zi), rtol=1e-12)
    x = np.array([-2.5, -1.0, -0.5, 0.0, -0.0, 0.5, 3.0, 200.5, np.inf, -np.inf, np.nan])
    _close(fs.gammasgn(x), ss.gammasgn(x), rtol=0)
    _close(fs.loggamma(x), ss.loggamma(x), rtol=1e-14)


def test_hyp1f1():
    a, b, x = RNG.uniform(-5, 8, 400), RNG.uniform(0.2, 10, 400), RNG.uniform(-60, 80, 400)
    a, b, x = np.r_[a, 2.0, -3, 0.5, 1.5, 0, 1, 3], np.r_[b, 3.0, 2, 1.5, 2.5, 1, -1, 0], np.r_[x, 400, 50, -400, 705, 2, 1, 1]
    _close(fs.hyp1f1(a, b, x), ss.hyp1f1(a, b, x), rtol=1e-12)


def test_hyp2f1():
    a, b, c = RNG.uniform(-4, 5, 500), RNG.uniform(-4, 5, 500), RNG.uniform(0.3, 8, 500)
    x = np.r_[RNG.uniform(0.9, 1.0, 50), RNG.uniform(-20, 1, 450)]
    _close(fs.hyp2f1(a, b, c, x), ss.hyp2f1(a, b, c, x), rtol=5e-11)
    a = np.array([1.0, 1, 1.5, -2, -2, 2, 1, 0.5, 1, 1, 2, 1, 3])
    b = np.array([1.0, 2, 2.5, 1, 1, 3, 1, 0.5, 2, 1, 3, 1, -1.5])
    c = np.array([2.0, 3, 3.2, 3, 3, -1, 2, 2.0, 3, 2, 7, 2, 5.5])  # (c - a - b integer in several)
    x = np.array([0.99, 0.95, 1.0, -50, 5, 0.5, 1.0, 0.97, -1e5, 0.9999, 0.999, 1.5, 0.96])
    _close(fs.hyp2f1(a, b, c, x), ss.hyp2f1(a, b, c, x), rtol=1e-10)


def test_bessel_jn():
    z = np.r_[0.0, 1e-300, 1e-10, 0.01, 0.5, 0.999, 1.0, 5.0, 10.0, 20.0, -3.3, -19.0, RNG.uniform(-20, 20, 50)]
    got = fs.bessel_jn(z, v=6)
    assert got.shape == (7,) + z.shape
    _close(got, np.stack([ss.jv(k, z) for k in range(7)]), rtol=1e-11, atol=1e-14)
    _close(fs.bessel_jn(np.array([40.0]), v=3, n_iter=90), np.stack([ss.jv(k, [40.0]) for k in range(4)]), rtol=1e-10,
           atol=1e-15)


def test_sph_harm_y():
    n, m = RNG.integers(0, 12, 500), RNG.integers(-13, 13, 500)
    theta, phi = RNG.uniform(-1, 4, 500), RNG.uniform(-7, 7, 500)
    _close(fs.sph_harm_y(n, m, theta, phi), ss.sph_harm_y(n, m, theta, phi), rtol=0, atol=1e-13)
    _close(fs.sph_harm_y(40, 7, 0.3, 0.2), ss.sph_harm_y(40, 7, 0.3, 0.2), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="diff_n"):
        fs.sph_harm_y(1, 0, 0.3, 0.2, diff_n=1)
    f = fg.jit(lambda t: fs.sph_harm_y(np.array([3, 2]), np.array([1, -2]), t, 0.4, n_max=3))
    _close(f(np.array([0.3, 1.1])), ss.sph_harm_y([3, 2], [1, -2], [0.3, 1.1], 0.4), rtol=1e-13)


def test_bernoulli_and_boxcox():
    exact = []
    for k in range(31):  # B_k from the sum formula, exactly
        exact.append(-sum(math.comb(k + 1, j) * exact[j] for j in range(k)) / Fraction(k + 1) if k else Fraction(1))
    got = fs.bernoulli(30)
    _close(got, [float(b) for b in exact], rtol=1e-15)
    _close(fs.bernoulli(10), ss.bernoulli(10), rtol=1e-11)  # (SciPy's B_4 is 2e-12 off; these are exact)
    x = np.array([0.0, 0, -1, 2, 1e-5, 3.0, 1e10])
    lam = np.array([0.5, -0.5, 0.5, 1e-20, 0.3, 0, -1e-8])
    _close(fs.boxcox(x, lam), _scipy(ss.boxcox, x, lam), rtol=1e-14)
    _close(fs.boxcox1p(x - 1, lam), _scipy(ss.boxcox1p, x - 1, lam), rtol=1e-14)


def test_float32_and_jit():
    x = np.array([0.3, 1.7, 5.0])
    for fn in [fs.dawsn, fs.spence, lambda v: fs.fresnel(v)[0], lambda v: fs.hyp1f1(1.5, 2.5, v)]:
        assert fn(x.astype(np.float32)).dtype == np.float32
        _close(fg.jit(fn)(x), fn(x), rtol=1e-14)
    _close(fg.jit(lambda v: fs.hyp2f1(1.5, 2.5, 4.2, v))(x - 4.0), ss.hyp2f1(1.5, 2.5, 4.2, x - 4.0), rtol=1e-13)
    _close(fg.jit(lambda v: fs.expn(3.0, v))(x), ss.expn(3, x), rtol=1e-14)
    _close(fg.jit(lambda v: fs.owens_t(v, 2.5))(x), ss.owens_t(x, 2.5), rtol=1e-13)


@pytest.mark.parametrize("fn,args", [
    (fs.dawsn, (np.array([0.3, 2.0, 8.0]),)),
    (lambda x: fs.fresnel(x)[0], (np.array([0.4, 1.5, 3.0]),)),
    (lambda x: fs.fresnel(x)[1], (np.array([0.4, 1.5, 3.0]),)),
    (lambda x, y: fs.wofz(x + 1j * y).real, (np.array([0.3, 2.0]), np.array([0.5, 1.5]))),
    (lambda x, y: fs.wofz(x + 1j * y).imag, (np.array([0.3, 70.0]), np.array([0.5, 1.5]))),
    (lambda x: fs.expn(2.0, x), (np.array([0.4, 3.0]),)),
    (lambda x: fs.sici(x)[0] + fs.sici(x)[1], (np.array([0.7, 9.0]),)),
    (fs.spence, (np.array([0.2, 0.9, 3.5]),)),
    (fs.owens_t, (np.array([0.4, 3.0]), np.array([0.5, 2.5]))),
    (lambda z: fs.poch(z, 2.5), (np.array([0.7, 3.0, -1.5]),)),
    (lambda x: fs.hyp1f1(1.5, 2.5, x), (np.array([-3.0, 0.5, 60.0]),)),
    (lambda x: fs.hyp2f1(1.5, 0.5, 3.2, x), (np.array([-3.0, 0.5, 0.95]),)),
    (lambda z: fs.bessel_jn(z, v=3), (np.array([0.5, 4.0]),)),
    (lambda t: fs.sph_harm_y(3, 1, t, 0.4).real, (np.array([0.3, 1.2]),)),
    (lambda lam: fs.boxcox(2.5, lam), (np.array([0.3, -0.7]),)),
    (fs.loggamma, (np.array([0.3, 4.0]),)),
])
def test_grads_against_finite_differences(fn, args):
    check_grads(fn, args, order=1)


def test_vmap_matches_elementwise():
    x = np.array([0.2, 0.5, -3.0])
    for fn in [lambda v: fs.hyp2f1(1.5, 0.5, 3.2, v), lambda v: fs.hyp1f1(1.5, 0.5, v), lambda v: fs.wofz(v + 1j),
               lambda v: fs.owens_t(v, 0.7), lambda v: fs.expn(2.0, v * v + 0.1)]:
        _close(fg.vmap(fn)(x), fn(x), rtol=1e-15)
