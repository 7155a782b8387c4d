"""Issue #17 part V: the fast vector-math paths against references better than NumPy.

- float32 exp/log/tanh (``lowering/vecmath_f32.py``, computed in float32): within 1.5 ulp
  of NumPy's float64 result (measured: about 1; NumPy's own float32 loops 1.4-2.7), over the grids of
  tests/test_lowering_vecmath_accuracy.py and every float32 binade;
- float64 exp/log (``lowering/vecmath_avx512.py`` on AVX-512 hosts, ``vecmath.py``
  elsewhere) and tanh: within 1 ulp (tanh 1.5) of a 40-digit ``decimal`` evaluation,
  at points that hit every table entry (multiples of ln2/16 and their neighbours for
  exp, every 1/16 of the mantissa and its edges for log) and random arguments;
- special values and the over/underflow thresholds exactly as NumPy.
"""
from __future__ import annotations

import decimal

import numpy as np
import pytest

from funcgrad.lowering import vecmath_avx512, vecmath_f32
from test_lowering_vecmath_accuracy import compile_unary, grid

CTX = decimal.Context(prec=40)


def _run(name, x):
    return np.asarray(compile_unary(name, x.dtype, x.size)(x)).reshape(-1)


def _ulps(got, exact, dtype):
    """|got - exact| in ulps of the exact value (in ``dtype``); exact: float64 or list of Decimal."""
    ref = np.array([float(e) for e in exact]) if isinstance(exact, list) else exact
    spacing = np.spacing(np.abs(ref).astype(dtype)).astype(np.float64)
    if isinstance(exact, list):
        return np.array([float(CTX.divide(abs(CTX.subtract(decimal.Decimal(float(g)), e)), decimal.Decimal(float(s))))
                         for g, e, s in zip(got, exact, spacing)])
    return np.abs(got.astype(np.float64) - ref) / spacing


@pytest.mark.parametrize("name", sorted(vecmath_f32.FUNCTIONS))
def test_float32_native_within_one_ulp_of_rounded_float64(name):
    x = grid(name, np.float32)
    got = _run(name, x)
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x.astype(np.float64))
        want = ref.astype(np.float32)
    fin = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{name}: nan mismatch"
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)]), f"{name}: inf mismatch"
    normal = fin & (np.abs(want) >= np.finfo(np.float32).tiny)
    ulp = _ulps(got[normal], ref[normal], np.float32)
    worst = int(np.argmax(ulp))
    assert ulp.max() <= 1.5, f"{name}: {ulp.max()} ulp at x={x[normal][worst]!r}"
    sub = fin & ~normal  # subnormal results (exp): within one subnormal step
    assert np.all(np.abs(got[sub].astype(np.float64) - ref[sub]) <= 2.0 ** -149), f"{name}: subnormal results"


def test_float32_native_special_values():
    f32 = np.float32
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 88.72283, 88.72284, -87.33654, -103.27893, -103.97208,
                  -103.9721, -104.0, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, -1.0, 9.25, -9.25, 0.55,
                  np.nextafter(f32(0.55), f32(0))], dtype=f32)
    for name in sorted(vecmath_f32.FUNCTIONS):
        got = _run(name, x)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x.astype(np.float64)).astype(f32)
        # nan, infinities and zeros (with their sign) exactly; the rest within one step
        exact = np.isnan(want) | np.isinf(want) | (want == 0) | np.isinf(x) | (x == 0)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        assert same[exact].all(), f"{name}: x={x[exact & ~same]} got {got[exact & ~same]} want {want[exact & ~same]}"
        assert np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0])), f"{name}: sign of zero"
        step = np.spacing(np.abs(want[~exact]))
        assert np.all(np.abs(got[~exact] - want[~exact]) <= step), f"{name}: x={x[~exact]} got {got[~exact]}"


def _exp_points():
    k = np.arange(-16 * 1000, 16 * 1000, 7)
    c = k * (np.log(2) / 16)  # every table entry, reduced arguments near +-ln2/32
    rng = np.random.default_rng(7)
    return np.concatenate([c, np.nextafter(c, np.inf), np.nextafter(c, -np.inf), c + np.log(2) / 32,
                           rng.uniform(-708, 708, 1500), rng.uniform(-1, 1, 500), [-708.0, 708.0, 1e-300]])


def _log_points():
    m = 1 + np.arange(0, 64) / 64  # every interval of the mantissa and its edges
    edges = np.concatenate([m * 0.671875, m * 0.671875 * (1 + 2.0 ** -52), m * 0.671875 * (1 - 2.0 ** -52)])
    rng = np.random.default_rng(8)
    near1 = 1 + np.concatenate([np.logspace(-16, -1, 300), -np.logspace(-16, -1, 300)])
    return np.concatenate([edges, edges * 2.0 ** 500, edges * 2.0 ** -700, near1, np.exp(rng.uniform(-700, 700, 1500)),
                           [5e-324, 1e-310, 2.2250738585072014e-308, 1.7976931348623157e308]])


def _tanh_points():
    # where e^(2x) - 1 = (2^(k/16) - 1) + 2^(k/16) r nearly cancels (k = 1: x ~ 0.0127), the
    # switch between em/(em+2) and 1 - 2/(em+2) at 0.55, tiny and saturating arguments
    return np.concatenate([np.random.default_rng(9).uniform(-12, 12, 1500), np.linspace(0.005, 0.03, 600),
                           -np.linspace(0.5, 0.6, 300), np.logspace(-20, 0, 200), np.linspace(18, 23, 100)])


def _tanh_exact(v: float) -> decimal.Decimal:
    e = CTX.exp(CTX.multiply(2, decimal.Decimal(v)))
    return CTX.divide(CTX.subtract(e, 1), CTX.add(e, 1))


@pytest.mark.parametrize("name, points, exact, bound", [
    ("exp", _exp_points, lambda v: CTX.exp(decimal.Decimal(v)), 1.0),
    ("log", _log_points, lambda v: CTX.ln(decimal.Decimal(v)), 1.0),
    ("tanh", _tanh_points, _tanh_exact, 1.5),
])
def test_float64_within_bound_of_decimal_reference(name, points, exact, bound):
    x = points()
    got = _run(name, x)
    ref = [exact(float(v)) for v in x]
    ok = np.array([abs(r) >= decimal.Decimal("2.2250738585072014e-308") for r in ref])
    ulp = _ulps(got[ok], [r for r, o in zip(ref, ok) if o], np.float64)
    worst = int(np.argmax(ulp))
    assert ulp.max() <= bound, f"{name}: {ulp.max()} ulp at x={x[ok][worst]!r}"


def test_avx512_tables():
    """The tables hold what their docstrings say (hi + lo to ~2^-100, log c hi on 2^-42)."""
    hi, lo = vecmath_avx512._table()
    for j in range(16):
        t = CTX.power(decimal.Decimal(2), CTX.divide(decimal.Decimal(j), decimal.Decimal(16)))
        assert abs(CTX.subtract(CTX.add(decimal.Decimal(hi[j]), decimal.Decimal(lo[j])), t)) < decimal.Decimal(2) ** -100
    inv, chi, clo = vecmath_avx512._log_table()
    assert inv[10] == 1.0 and chi[10] == 0.0 and clo[10] == 0.0
    for c, h, lo_ in zip(inv, chi, clo):
        assert h * 2.0 ** 42 == round(h * 2.0 ** 42)
        err = CTX.add(CTX.add(decimal.Decimal(h), decimal.Decimal(lo_)), CTX.ln(decimal.Decimal(c)))
        assert abs(err) < decimal.Decimal(2) ** -90  # (lo is below 2^-43: its rounding ~2^-96)
