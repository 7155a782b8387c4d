"""Issue #17: the vector-math fast paths (``lowering/vecmath*.py``; AVX-512 hosts take the
table, ``vscalef``, ``vrcp14`` and cold-branch paths, other hosts the portable bodies --
these tests hold on both).

- A result depends only on its argument: not on the array length (vector body or
  remainder code), the position in the array, the alignment, or the other lanes of its
  vector -- special values (which send the whole vector to a cold branch: log's
  positive-normal fast path, exp's C-library lanes) sit next to ordinary ones.
- tanh's interval tables (float32: ``vecmath_f32``, float64: ``vecmath_tanh64``): every
  interval edge and its neighbours within 1.5 ulp (of the rounded float64 tanh, of 40
  digits); tiny and subnormal arguments come back exactly; the stored float64 table
  is what its mpmath fit computes.
- The constant pool (``vecmath_ir.Pool``): constants become loads of one global, shift
  counts stay immediates.
"""
from __future__ import annotations

import decimal

import numpy as np
import pytest

from funcgrad.lowering import tiered, vecmath_f32, vecmath_tanh64
from funcgrad.lowering.builder import ModuleBuilder
from funcgrad.lowering.vecmath_ir import Fn, Pool
from test_lowering_vecmath_accuracy import compile_unary

CTX = decimal.Context(prec=40)

# arguments per function: ordinary values plus each special / cold-branch case
VALUES = {
    "exp": [0.5, -3.25, 20.0, -700.0, 707.9, 708.5, 709.7, 709.8, -708.5, -745.0, -746.0, 1e-300, -0.0, 0.0,
            np.inf, -np.inf, np.nan, 5e-324],
    "log": [0.5, 3.0, 1.0, 1e300, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-310, 5e-324, 0.0, -0.0,
            -1.0, np.inf, -np.inf, np.nan, 0.999999, 1.0000001],
    "tanh": [0.5, -0.3, 0.0625, 0.078125, 0.0781, 2.5, -9.0, 9.25, 12.0, 12.5, 30.0, 1e-30, 1e-310, 0.0, -0.0,
             np.inf, -np.inf, np.nan, 0.55, -0.97],
}
FILL = {"exp": 1.25, "log": 2.5, "tanh": 0.75}


def _same_bits(a, b):
    """Bit equality, any NaN equal to any NaN."""
    ia = a.view(np.uint64 if a.dtype == np.float64 else np.uint32)
    ib = b.view(ia.dtype)
    return (ia == ib) | (np.isnan(a) & np.isnan(b))


@pytest.fixture
def optimised():
    """Programs compiled with the full pipeline at once (the loop vectoriser calls the
    vector entries; the quick first tier calls the scalar entry per element)."""
    previous = tiered.set_mode("off")
    yield
    tiered.set_mode(previous)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", sorted(VALUES))
def test_result_independent_of_length_position_alignment_and_neighbours(name, dtype, optimised):
    with np.errstate(all="ignore"):
        vals = np.array(VALUES[name], dtype=dtype)
    # reference: each value alone (one element: the scalar entry, a splat of the value)
    exe1 = compile_unary(name, dtype, 1)
    ref = np.array([exe1(vals[i:i + 1])[0][0] for i in range(vals.size)], dtype=dtype)
    # and among ordinary values in a long vector loop (the fast paths)
    exe64 = compile_unary(name, dtype, 64)
    for i, v in enumerate(vals):
        x = np.full(64, FILL[name], dtype=dtype)
        x[9] = v
        assert _same_bits(exe64(x)[0][9:10], ref[i:i + 1]).all(), f"{name}({v}): vector {exe64(x)[0][9]}"
    buf = np.empty(260, dtype=dtype)
    for n in list(range(1, 41)) + [64, 203]:
        exe = compile_unary(name, dtype, n)
        for offset in (0, 1, 3):  # element offsets: 8- and 64-byte alignment differ
            for shift in range(0, len(vals), 7 if n > 8 else 3):
                idx = (np.arange(n) + shift) % len(vals)
                x = buf[offset:offset + n]
                x[:] = vals[idx]
                got = np.asarray(exe(x)[0])
                ok = _same_bits(got, ref[idx])
                assert ok.all(), (f"{name} {np.dtype(dtype).name} n={n} offset={offset}: "
                                  f"x={x[~ok]} got {got[~ok]} alone {ref[idx][~ok]}")


def _edges(bs, top, dtype) -> np.ndarray:
    edges = np.array(sorted(set(bs[1:])) + [top], dtype=dtype)
    pts = [edges, np.nextafter(edges, dtype(0)), np.nextafter(edges, dtype(np.inf)), (edges[:-1] + edges[1:]) / 2]
    x = np.concatenate(pts).astype(dtype)
    return np.concatenate([x, -x])


def _tanh_exact(v: float) -> decimal.Decimal:
    e = CTX.exp(CTX.multiply(2, decimal.Decimal(v)))
    return CTX.divide(CTX.subtract(e, 1), CTX.add(e, 1))


def test_float32_tanh_interval_edges_within_bound():
    x = _edges(vecmath_f32._tanh_table()[0], 16.0, np.float32)
    got = np.asarray(compile_unary("tanh", np.float32, x.size)(x)[0])
    ref = np.tanh(x.astype(np.float64))
    ulp = np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    worst = int(np.argmax(ulp))
    assert ulp.max() <= 1.5, f"tanh: {ulp.max()} ulp at x={x[worst]!r}"


def test_float64_tanh_interval_edges_within_bound():
    """Every slot edge of ``vecmath_tanh64`` (and the cap) against 40 digits: 1.5 ulp
    (as tests/test_lowering_vecmath_native.py)."""
    x = np.concatenate([_edges(vecmath_tanh64.table()[0], 32.0, np.float64), [19.0, 19.1, 20.0, 20.5, 0.125]])
    got = np.asarray(compile_unary("tanh", np.float64, x.size)(x)[0])
    ref = [_tanh_exact(float(v)) for v in x]
    err = [abs(CTX.subtract(decimal.Decimal(float(g)), r)) / decimal.Decimal(float(np.spacing(abs(float(r)))))
           for g, r in zip(got, ref)]
    worst = int(np.argmax([float(e) for e in err]))
    assert float(err[worst]) <= 1.5, f"tanh: {float(err[worst])} ulp at x={x[worst]!r}"


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_tanh_tiny_and_subnormal_exact(dtype):
    # (tanh x rounds to x below ~2^-12 in float32, ~2^-27 in float64)
    small = 2.0 ** -13 if dtype == np.float32 else 2.0 ** -28
    tiny = np.array([1e-45, -1e-45, 1e-40, 1.1754944e-38, -3e-20, small, -small, 0.0, -0.0]
                    + ([5e-324, -1e-310, 2.2250738585072014e-308, 1e-200] if dtype == np.float64 else []),
                    dtype=dtype)
    got = np.asarray(compile_unary("tanh", dtype, tiny.size)(tiny)[0])
    assert np.array_equal(got.view(np.uint64 if dtype == np.float64 else np.uint32),
                          tiny.view(np.uint64 if dtype == np.float64 else np.uint32))


def test_float64_tanh_table_is_the_fit():
    """The stored coefficients are what ``vecmath_tanh64.fit`` computes (mpmath, 60 digits)."""
    pytest.importorskip("mpmath")
    assert vecmath_tanh64.fit() == vecmath_tanh64.table()
    bs, cs = vecmath_tanh64.table()
    assert bs[:2] == [0.0, 0.0] and [c[0] for c in cs][:3] == [0.0, 1.0, 0.0] and len(cs) == 17


def test_float32_tanh_table_shape():
    """32 intervals; interval 0 is the odd polynomial x + c3 x^3 + c5 x^5 from 0."""
    bs, cs = vecmath_f32._tanh_table()
    assert len(bs) == 32 and len(cs) == vecmath_f32.TANH_DEGREE + 1 and all(len(c) == 32 for c in cs)
    assert bs[0] == 0.0 and [c[0] for c in cs][:3] == [0.0, 1.0, 0.0] and cs[4][0] == 0.0
    assert all(b1 > b0 for b0, b1 in zip(bs, bs[1:]))
    assert all(np.float32(b) == b for b in bs)  # (y = |x| - b is exact)


def test_pool_constants_are_loads_and_shifts_stay_immediate():
    pool = Pool("fg_vm_k_test")
    f = Fn(ModuleBuilder(), 8, pool=pool)
    y = f.add("%x0", 1.5)
    f.add(y, 1.5)  # the same constant: loaded once
    f.i("shl", f.bits(y), 52)
    f.i("add", f.bits(y), 1023)
    text = "\n".join(f.lines)
    assert "splat (double" not in text and "shl <8 x i64> %t" in text and "splat (i64 52)" in text
    assert text.count("load double, ptr getelementptr inbounds (i64, ptr @fg_vm_k_test") == 1
    assert pool.words == [0x3FF8000000000000, 1023]
    at = pool.vector([1, 2, 3, 4, 5, 6, 7, 8])
    assert at % 8 == 0 and pool.words[at:at + 8] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert pool.text().startswith("@fg_vm_k_test = global [16 x i64] [i64 4609434218613702656, i64 1023")
