"""int8, int16, uint8, uint16 as dtypes: NumPy 2 promotion over every pair of supported
dtypes and with weak Python scalars (eager, staged and compiled agree), out-of-range
Python ints raise OverflowError as NumPy's do, the IR's short names, float -> small int
casts (saturating where C leaves the result undefined), bool arithmetic as NumPy's,
random bits/randint in small dtypes, and the typed errors of the bit-packing functions.
Values of each operation are in the op table (tests/op_rows/small_ints.py)."""
import itertools
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import random
from funcgrad.core import dtypes

ALL = [np.dtype(t) for t in dtypes.SUPPORTED]
SMALL = [np.dtype(t) for t in (np.int8, np.int16, np.uint8, np.uint16)]


def test_every_small_dtype_is_supported_and_exported():
    for dt in SMALL:
        assert dt in dtypes.SUPPORTED
        assert getattr(fnp, dt.name) is dt.type
    assert fnp.int_ is np.int64 and fnp.uint is np.uint64
    text = str(fg.make_jaxpr(lambda a, b, c, d: (a, b, c, d))(*[np.zeros(2, dt) for dt in SMALL]))
    for short in ("i8[2]", "i16[2]", "u8[2]", "u16[2]"):
        assert short in text


def test_promotion_of_every_pair_is_numpys_eager_and_staged():
    for a, b in itertools.product(ALL, ALL):
        x, y = np.ones(2, a), np.ones(2, b)
        want = np.result_type(a, b)
        assert fnp.add(x, y).dtype == want, (a, b)
        jaxpr = fg.make_jaxpr(lambda u, v: (u * v, fnp.maximum(u, v)))(x, y)
        assert [v.aval.dtype for v in jaxpr.jaxpr.outvars] == [want, want], (a, b)


@pytest.mark.parametrize("dt", SMALL, ids=lambda d: d.name)
def test_promotion_with_other_dtypes_compiled(dt):
    others = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                    np.int64, np.uint64, np.float32, np.float64)]
    xs = [np.ones(3, o) for o in others]
    got = fg.jit(lambda x, *ys: [x + y for y in ys])(np.ones(3, dt), *xs)
    assert [g.dtype for g in got] == [np.result_type(dt, o) for o in others]


@pytest.mark.parametrize("dt", ALL, ids=lambda d: d.name)
def test_weak_python_scalars_follow_nep50_and_overflow_like_numpy(dt):
    x = np.array([1, 0], dt)
    scalars = [True, 1, 127, 128, 255, 256, 40000, 70000, -1, -129, 2**40, 2**63, -(2**63), 1.5]
    for s in scalars:
        try:
            want = np.add(x, s)
        except OverflowError:
            with pytest.raises(OverflowError):
                fnp.add(x, s)
            with pytest.raises(OverflowError):
                fg.jit(lambda v, s=s: v + s)(x)  # a constant in the program: checked when tracing
            continue
        got = fnp.add(x, s)
        assert got.dtype == want.dtype, (dt, s)
        np.testing.assert_array_equal(got, want)
        staged = fg.jit(lambda v, s=s: fnp.add(v, s))(x)
        assert staged.dtype == want.dtype
        np.testing.assert_array_equal(staged, want)


def test_numpy_scalar_plus_out_of_range_python_int_raises():
    with pytest.raises(OverflowError, match="300 out of bounds for int8"):
        fnp.add(np.int8(1), 300)
    with pytest.raises(OverflowError, match="-1 out of bounds for uint16"):
        fnp.subtract(fnp.asarray(np.uint16(3)), -1)
    assert fnp.add(np.int8(1), 126) == np.int8(127) and fnp.add(np.int8(1), 126).dtype == np.int8


def test_float_functions_compute_in_numpys_loop_dtype():
    # np.sin(int16) is float32; NumPy's float16 (bool, int8, uint8) is float64 in funcgrad.
    for dt, want in [(np.int8, np.float64), (np.uint8, np.float64), (np.int16, np.float32),
                     (np.uint16, np.float32), (np.int32, np.float64), (np.bool_, np.float64)]:
        x = np.ones(2, dt)
        for f in (fnp.sin, fnp.sqrt, fnp.exp, lambda v: fnp.arctan2(v, v), lambda v: fnp.hypot(v, 2)):
            assert f(x).dtype == want, (dt, f)
            assert fg.jit(f)(x).dtype == want
        assert fnp.divide(x, x).dtype == np.float64  # true_divide's loop is float64 (NumPy)
        assert fnp.sinc(x).dtype == np.float64 and fnp.mean(x).dtype == np.float64


def test_wraparound_abs_minimum_and_division_by_zero():
    m = np.array([-128], np.int8)
    assert fnp.abs(m)[0] == -128 and fg.jit(fnp.abs)(m)[0] == -128  # as NumPy: wraps
    assert fnp.negative(m)[0] == -128
    assert fnp.floor_divide(m, np.int8(-1))[0] == -128 and fnp.remainder(m, np.int8(-1))[0] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy warns for integer // 0; funcgrad gives 0 silently
        for f in (fnp.floor_divide, fnp.remainder, fg.jit(fnp.floor_divide)):
            np.testing.assert_array_equal(f(np.array([5, -7], np.int16), np.zeros(2, np.int16)), [0, 0])
    u = np.array([250, 3], np.uint8)
    np.testing.assert_array_equal(fg.jit(lambda a: a + np.uint8(10))(u), [4, 13])
    np.testing.assert_array_equal(fg.jit(lambda a: a * a)(np.array([16, 300], np.uint16)), [256, 24464])


def test_float_to_small_int_casts_truncate_in_range_and_saturate_outside():
    # In range (after truncation toward zero) the cast is C's and NumPy's. Outside, C leaves
    # it undefined (NumPy on x86-64 converts through a wider int and wraps: 300.7 -> 44 as
    # int8); funcgrad saturates and maps NaN to 0, eagerly and compiled alike.
    f = np.array([-300.7, -128.9, -1.5, 0.5, 127.9, 300.0, np.nan, np.inf, -np.inf, 70000.0])
    want = {np.int8: [-128, -128, -1, 0, 127, 127, 0, 127, -128, 127],
            np.uint8: [0, 0, 0, 0, 127, 255, 0, 255, 0, 255],
            np.int16: [-300, -128, -1, 0, 127, 300, 0, 32767, -32768, 32767],
            np.uint16: [0, 0, 0, 0, 127, 300, 0, 65535, 0, 65535]}
    for dt, w in want.items():
        for cast in (lambda v, dt=dt: fnp.asarray(v, dt), fg.jit(lambda v, dt=dt: v.astype(dt))):
            got = cast(f)
            assert got.dtype == dt
            np.testing.assert_array_equal(got, np.array(w, dt))


def test_sum_of_small_ints_accumulates_in_int64_or_uint64():
    for dt in SMALL:
        x = np.full(300, np.iinfo(dt).max, dt)
        for f in (fnp.sum, fg.jit(fnp.sum), lambda v: fnp.cumsum(v)[-1], fnp.prod):
            assert f(x).dtype == np.sum(x).dtype
        assert fnp.sum(x) == np.sum(x)
        assert fnp.max(x).dtype == dt and fnp.mean(x).dtype == np.float64


def test_bool_arithmetic_is_numpys():
    b = np.array([True, False, True])
    assert fnp.add(b, b).dtype == np.bool_ and fnp.add(b, b).tolist() == [True, False, True]
    assert (fnp.asarray(b) + fnp.asarray(b)).dtype == np.bool_
    assert fnp.multiply(b, 2).dtype == np.int64 and fnp.multiply(b, np.int16(2)).dtype == np.int16
    assert fnp.sum(b) == 2 and fnp.sum(b).dtype == np.int64 and fnp.mean(b).dtype == np.float64
    assert fg.jit(fnp.sum)(b).dtype == np.int64
    with pytest.raises(TypeError, match="boolean negative"):
        -fnp.asarray(b)
    with pytest.raises(TypeError, match="subtract"):
        fnp.subtract(b, b)
    with pytest.raises(TypeError, match="subtract"):
        fg.jit(lambda u: u - u)(b)
    assert fnp.square(b).dtype == np.int8 and fnp.left_shift(b, b).dtype == np.int8


def test_random_bits_and_randint_in_small_dtypes():
    key = random.key(3)
    wide = random.bits(key, (4, 3), np.uint32)
    for dt in (np.uint8, np.uint16):
        bits = random.bits(key, (4, 3), dt)
        assert bits.dtype == dt
        np.testing.assert_array_equal(bits, wide.astype(dt))  # the low bits, as JAX's
        np.testing.assert_array_equal(fg.jit(lambda k, dt=dt: random.bits(k, (4, 3), dt))(key), bits)
    for dt, lo, hi in ((np.int8, -100, 100), (np.uint8, 5, 250), (np.int16, -3, 4), (np.uint16, 0, 60000)):
        r = random.randint(key, (500,), lo, hi, dt)
        assert r.dtype == dt and r.min() >= lo and r.max() < hi
        assert len(np.unique(r)) > min(hi - lo, 500) // 3
    with pytest.raises(TypeError, match="bits: dtype must be an unsigned"):
        random.bits(key, (2,), np.int8)


def test_small_int_indices_eager_and_traced():
    table = fnp.arange(300.0)
    for dt in SMALL:
        i = np.array([3, 1, 127], dt)
        np.testing.assert_array_equal(table[i], [3.0, 1.0, 127.0])
        np.testing.assert_array_equal(fg.jit(lambda k: table[k])(i), [3.0, 1.0, 127.0])
        np.testing.assert_array_equal(fg.vmap(lambda k: table[k])(i), [3.0, 1.0, 127.0])
    np.testing.assert_array_equal(fg.jit(lambda k: table[k])(np.array([-1, -300], np.int16)), [299.0, 0.0])


def test_gradients_flow_through_small_int_casts_as_zero():
    def f(x):
        q = fnp.asarray(x * 10, np.int8)  # quantise: no gradient through the integer
        return fnp.sum(x * q.astype(np.float64))

    x = np.array([0.25, -0.5, 1.25])
    np.testing.assert_allclose(fg.grad(f)(x), (x * 10).astype(np.int8).astype(np.float64))
    np.testing.assert_allclose(fg.jit(fg.grad(f))(x), (x * 10).astype(np.int8).astype(np.float64))


def test_bitpack_errors_name_the_function_and_argument():
    with pytest.raises(TypeError, match=r"bitwise_count: x must be an integer or bool array, got float64"):
        fnp.bitwise_count(np.ones(2))
    with pytest.raises(TypeError, match=r"packbits: a must be a bool or integer array, got float32"):
        fnp.packbits(np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"unpackbits: a must be a uint8 array, got int8"):
        fnp.unpackbits(np.ones(2, np.int8))
    with pytest.raises(ValueError, match=r"packbits: bitorder must be 'big' or 'little', got 'middle'"):
        fnp.packbits(np.ones(2, bool), bitorder="middle")
    with pytest.raises(ValueError, match=r"unpackbits: -count larger than number of elements"):
        fnp.unpackbits(np.ones(1, np.uint8), count=-9)
    with pytest.raises(np.exceptions.AxisError):
        fnp.packbits(np.ones((2, 3), bool), axis=2)
    with pytest.raises(TypeError, match="unpackbits: count must be an integer"):
        fnp.unpackbits(np.ones(1, np.uint8), count=1.5)


def test_comparisons_with_out_of_range_python_ints_are_exact_as_in_numpy2():
    u = np.array([0, 3, 65535], np.uint16)
    i8 = np.array([-128, 0, 127], np.int8)
    cases = [(u, -1), (u, 70000), (i8, 300), (i8, -129), (i8, 5)]
    for x, s in cases:
        for name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
            want, back = getattr(np, name)(x, s), getattr(np, name)(s, x)
            for got in (getattr(fnp, name)(x, s), fg.jit(lambda v, name=name, s=s: getattr(fnp, name)(v, s))(x)):
                assert got.dtype == np.bool_
                np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(getattr(fnp, name)(s, x), back)
    np.testing.assert_array_equal(fg.vmap(lambda v: v > -1)(u), [True] * 3)
    assert fnp.less(np.uint8(3), -1) == np.False_
    with pytest.raises(OverflowError):
        fnp.add(u, -1)  # arithmetic still raises, as NumPy's


def test_scalars_and_unsigned_starts_reach_compiled_code():
    from funcgrad import lax

    for dt in SMALL:
        s = dt.type(7)
        got = fg.jit(lambda a: a * a)(s)  # a 0-d NumPy scalar of the exact dtype: the fast path
        assert got.dtype == dt and got == dt.type(49)
    x = np.arange(10.0)
    for dt in (np.uint8, np.uint16, np.int8):
        start = np.array(8, dt)
        np.testing.assert_array_equal(lax.dynamic_slice(x, (start,), (3,)), [7.0, 8.0, 9.0])  # clamped
        np.testing.assert_array_equal(fg.jit(lambda v, i: lax.dynamic_slice(v, (i,), (3,)))(x, start), [7.0, 8.0, 9.0])


def test_where_wraps_an_out_of_range_python_int_as_numpy():
    # fuzzer seeds 2184/2317/2493: np.where casts (wraps) where arithmetic raises
    m = np.array([False, True])
    for arr in (np.array([1, 2], np.uint16), np.array([1, 2], np.int8), np.array([3, 4], np.uint8)):
        for s in (-1, 300, 70000):
            for got, want in ((fnp.where(m, arr, s), np.where(m, arr, s)), (fnp.where(m, s, arr), np.where(m, s, arr)),
                              (fg.jit(lambda m, a, s=s: fnp.where(m, a, s))(m, arr), np.where(m, arr, s))):
                np.testing.assert_array_equal(got, want)
                assert np.asarray(got).dtype == want.dtype


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int8, np.int16, np.uint32, np.int32])
def test_comparisons_with_a_traced_python_int_are_exact(dtype):
    # fuzzer seeds 3135/9274: a Python int jit argument is traced (value unknown); compared
    # with a narrower integer it must not wrap into that dtype (uint16 > -1 is True).
    info = np.iinfo(dtype)
    c = np.array([0, 3, info.max], dtype)
    for s in (-1, -2, int(info.max), int(info.max) + 1, 5):
        got = fg.jit(lambda c, s: (c == s, c > s, c <= s, s < c))(c, s)
        want = (c == s, c > s, c <= s, s < c)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
