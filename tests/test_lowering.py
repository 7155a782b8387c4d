"""Native lowering (funcgrad.lowering): compiled jaxprs vs the evaluator.

Tolerances (measured on this machine, numpy 2.4 on AVX2; see the report in
funcgrad/lowering/__init__.py):
- integers and bools: bitwise;
- float arithmetic, sqrt, floor/ceil/round, comparisons, casts, layout ops, cumsum:
  bitwise (strict IEEE, no fast-math);
- float64 transcendentals: compiled code calls glibc's libm; NumPy uses its own SIMD
  code for some functions (tanh, sinh, cbrt, asin, ...): up to ~4e-16 relative
  (<= 2 ulp), so 1e-15; float32 up to ~1.5e-7 (2 ulp), so 4e-7;
- reductions (reassociated, vectorised accumulation vs NumPy's pairwise sum) and
  dot_general (BLAS, or the loop kernel): 1e-13 relative for float64 (largest seen
  5e-15), 1e-5 for float32.
"""
import sys
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.primitive import lower_rules
from funcgrad.core.pytree import tree_flatten
from funcgrad.errors import LoweringError
from funcgrad.lowering import compile_jaxpr
from funcgrad.lowering import dot as lowering_dot
from funcgrad.lowering.inline import inline_calls

RNG = np.random.default_rng(0)
DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]


def sample(shape, dtype, lo=-3, hi=3):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if dtype.kind == "i":
        return RNG.integers(lo, hi + 1, shape).astype(dtype)
    return RNG.uniform(lo, hi, shape).astype(dtype)


def assert_matches(got, want, rtol=None, atol=0.0):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert isinstance(g, np.ndarray)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype.kind in "fc" and rtol is not None:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)  # bitwise (NaNs in the same places)


def check(f, *args, rtol=None, atol=0.0):
    """compile(make_jaxpr(f)) on args equals eval of the same jaxpr; returns the executable."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        closed = fg.make_jaxpr(f)(*args)
        exe = compile_jaxpr(closed)
        leaves, _ = tree_flatten(args)
        got = exe(*leaves)
        want = fg.eval_closed_jaxpr(closed, *leaves)
    assert_matches(got, want, rtol, atol)
    return exe


# --- elementwise ---------------------------------------------------------------------------
SHAPES = [(), (0,), (5,), (2, 3), (3, 0, 2)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_elementwise_chain_all_dtypes(dtype, shape):
    x, y, z = sample(shape, dtype), sample(shape, dtype), sample(shape, dtype)
    if np.dtype(dtype) == np.bool_:
        f = lambda x, y, z: fnp.where(x == y, x & ~z, (y ^ z) | (x < z))  # noqa: E731
    elif np.dtype(dtype).kind == "i":
        f = lambda x, y, z: fnp.where(x > y, x * y - z, fnp.maximum(x, z) + fnp.abs(y)) ^ (x & 3)  # noqa: E731
    else:
        f = lambda x, y, z: fnp.where(x > y, x * y - z / (fnp.abs(y) + 1), fnp.minimum(x, z) + fnp.sqrt(fnp.abs(y)))  # noqa: E731
    check(f, x, y, z)


FLOAT_UNARY = ["exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
               "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "sqrt", "cbrt", "floor", "ceil", "rint",
               "isfinite", "negative", "abs", "sign"]
_EXACT = {"sqrt", "floor", "ceil", "rint", "isfinite", "negative", "abs", "sign"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_float_unary(dtype):
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-310, 1e300, 0.9999])
    with np.errstate(over="ignore"):
        x = np.concatenate([sample((40,), dtype, -4, 4), special.astype(dtype)])
    for name in FLOAT_UNARY:
        fn = getattr(fnp, name)
        arg = x
        if name in ("arccosh",):
            arg = np.abs(x) + 1
        tol = None if name in _EXACT else (1e-15 if dtype == np.float64 else 4e-7)
        check(fn, arg, rtol=tol)


@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_integer_unary(dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, -1, 7, -7, info.max, info.min], dtype)
    for fn in (fnp.negative, fnp.abs, fnp.sign, fnp.invert):
        check(fn, x)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_binary_arith_with_specials(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        vals = np.array([0, 1, -1, 2, -2, 7, -7, 13, info.max, info.min + 1], dtype)
    else:
        vals = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -7.25, np.inf, -np.inf, np.nan, 3.0], dtype)
    x, y = np.meshgrid(vals, vals)
    ops = [lax.add, lax.sub, lax.mul, lax.div, lax.rem, lax.max, lax.min]
    for op in ops:
        check(op, x, y)
    if dtype.kind == "f":
        for op in (lax.atan2, lax.copysign, lax.pow):
            check(op, x, y, rtol=1e-15 if dtype == np.float64 else 4e-7)


def test_integer_division_by_zero_is_zero():
    for dtype in (np.int32, np.int64):
        x = np.array([5, -5, 0, 7, np.iinfo(dtype).max], dtype)
        z = np.zeros_like(x)
        exe = check(lambda a, b: (lax.div(a, b), lax.rem(a, b)), x, z)
        q, r = exe(x, z)
        assert not q.any() and not r.any()
    m = np.iinfo(np.int64).min
    exe = check(lambda a, b: (lax.div(a, b), lax.rem(a, b)), np.array([m, m]), np.array([-1, 0]))
    q, r = exe(np.array([m, m]), np.array([-1, 0]))
    assert list(q) == [m, 0] and list(r) == [0, 0]  # wraps / zero, never SIGFPE


def test_integer_pow_and_pow():
    xi = np.array([-3, -2, -1, 0, 1, 2, 3, 5], np.int64)
    for n in (0, 1, 2, 3, 7, 13, 40):
        check(lambda a: lax.integer_pow(a, n), xi)
        check(lambda a: lax.integer_pow(a, n), xi.astype(np.int32))
    xf = sample((9,), np.float64)
    for n in (0, 1, 2, 3, 5, 8, 9, -1, -3):
        check(lambda a: lax.integer_pow(a, n), xf, rtol=1e-15)
    check(lax.pow, xi, np.array([0, 1, 2, 3, 4, 5, 6, 30], np.int64))


def test_comparisons_and_logic_all_dtypes():
    for dtype in DTYPES:
        x, y = sample((4, 3), dtype), sample((4, 3), dtype)
        check(lambda a, b: [lax.eq(a, b), lax.ne(a, b), lax.lt(a, b), lax.le(a, b), lax.gt(a, b), lax.ge(a, b)], x, y)
        if np.dtype(dtype).kind in "bi":
            check(lambda a, b: [lax.bitwise_and(a, b), lax.bitwise_or(a, b), lax.bitwise_xor(a, b), lax.bitwise_not(a)], x, y)
    nan = np.array([np.nan, 1.0, np.nan, -0.0])
    check(lambda a, b: [lax.eq(a, b), lax.ne(a, b), lax.lt(a, b), lax.max(a, b), lax.min(a, b)], nan, nan[::-1].copy())


def test_select_n():
    c = [sample((3, 4), np.float64) for _ in range(3)]
    check(lambda p, a, b: lax.select_n(p, a, b), sample((3, 4), np.bool_), c[0], c[1])
    which = np.array([[-1, 0, 1, 2], [3, 2, 1, 0], [5, -7, 2, 1]], np.int32)
    check(lambda w, a, b, d: lax.select_n(w, a, b, d), which, *c)


@pytest.mark.parametrize("src", DTYPES, ids=lambda d: np.dtype(d).name)
def test_convert_element_type(src):
    x = sample((11,), src, -100, 100)
    if np.dtype(src).kind == "f":
        x[:5] = np.array([np.nan, 0.5, -0.5, 1e9, -2.5e9], src)
    for dst in DTYPES:
        check(lambda a: lax.convert_element_type(a, dst), x)


def test_float_to_int_saturates():
    # The documented semantics (clamp, NaN -> 0). The evaluator's impl disagrees at the
    # top of the int64 range (float 2**63 casts to INT_MIN), so compare with the spec.
    x = np.array([1e30, -1e30, np.nan, np.inf, -np.inf, 3.7, -3.7])
    for dst in (np.int32, np.int64):
        exe = compile_jaxpr(fg.make_jaxpr(lambda a: lax.convert_element_type(a, dst))(x))
        info = np.iinfo(dst)
        assert exe(x)[0].tolist() == [info.max, info.min, 0, info.max, info.min, 3, -3]


def test_broadcasting_shapes():
    check(lambda a, b: a * b + 1.0, sample((3, 1), np.float64), sample((1, 4), np.float64))
    check(lambda a, b: a - b, sample((2, 1, 3), np.int32), sample((4, 1), np.int32))
    check(lambda a, b: fnp.where(a, b, 0.0), sample((5, 1), np.bool_), sample((5, 6), np.float64))
    check(lambda a: a + 1.0, sample((0, 3), np.float64))
    check(lambda a, s: a * s, sample((2, 3), np.float64), np.float64(2.5))


# --- layout ---------------------------------------------------------------------------------------
def test_layout_ops():
    x = sample((3, 4, 5), np.float64)
    check(lambda a: lax.transpose(a, (2, 0, 1)) * 2.0, x)
    check(lambda a: lax.reshape(lax.transpose(a, (1, 0, 2)), (4, 15)), x)
    check(lambda a: lax.rev(a, (0, 2)), x)
    check(lambda a: lax.slice(a, (1, 0, 1), (3, 4, 5), (1, 2, 3)), x)
    check(lambda a: lax.pad(a, 0.5, [(1, 2, 0), (0, 0, 1), (-1, 2, 2)]), x)
    check(lambda a: lax.pad(a, -1.0, [(-1, -1, 0), (2, -3, 1), (0, 0, 0)]), x)
    check(lambda a, b: lax.concatenate([a, b, a], 1), x, sample((3, 2, 5), np.float64))
    check(lambda a, b: lax.concatenate([a, b], 0), sample((0, 2), np.int32), sample((3, 2), np.int32))
    check(lambda: lax.iota(np.int32, (3, 4), 1) * 2)
    check(lambda a: a + lax.iota(np.float64, (3, 4, 5), 2), x)
    check(lambda a: lax.broadcast_in_dim(a, (2, 3, 4, 5), (1, 2, 3)), x)
    check(lambda a: lax.pad(a, 0, [(1, 1, 1)]), np.zeros((0,), np.int64))
    check(lambda a: (a.T[1:, ::2], a[::-1]), sample((4, 6), np.bool_))


# --- reductions ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_reductions(dtype):
    x = sample((3, 4, 5), dtype, -2, 2)
    tol = {np.dtype(np.float64): 1e-13, np.dtype(np.float32): 1e-5}.get(np.dtype(dtype))
    for axes in [(), (0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)]:
        fns = [lax.reduce_max, lax.reduce_min]
        if np.dtype(dtype) != np.bool_:
            fns += [lax.reduce_sum, lax.reduce_prod]
        check(lambda a: [fn(a, axes) for fn in fns], x, rtol=tol)
    for axis in range(3):
        check(lambda a: [lax.argmax(a, axis), lax.argmin(a, axis, np.int32)], x)
    if np.dtype(dtype) != np.bool_:
        check(lambda a: [lax.cumsum(a, 1), lax.cumprod(a, 2, reverse=True)], x)


def test_reductions_nan_and_empty():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, -1.0, np.nan], [2.0, 2.0, 0.5]])
    check(lambda a: [lax.reduce_max(a, (1,)), lax.reduce_min(a, (0,)), lax.argmax(a, 1), lax.argmin(a, 0)], x)
    e = np.zeros((0, 3))
    check(lambda a: [lax.reduce_sum(a, (0,)), lax.reduce_prod(a, (0,)), lax.reduce_sum(a, (1,))], e)
    check(lambda a: lax.reduce_sum(a * a, (0, 1)), np.zeros((4, 0)))


def test_softmax_like_program():
    x = sample((6, 7), np.float64)

    def softmax(a):
        m = fnp.max(a, axis=1, keepdims=True)
        e = fnp.exp(a - m)
        return e / fnp.sum(e, axis=1, keepdims=True), fnp.mean(a, axis=0)

    check(softmax, x, rtol=1e-13)


# --- dot_general -------------------------------------------------------------------------------------
MATMUL_CASES = [
    ((4, 5), (5, 3), (((1,), (0,)), ((), ()))),  # plain
    ((5, 4), (5, 3), (((0,), (0,)), ((), ()))),  # lhs transposed
    ((4, 5), (3, 5), (((1,), (1,)), ((), ()))),  # rhs transposed
    ((5, 4), (3, 5), (((0,), (1,)), ((), ()))),  # both
    ((2, 4, 5), (2, 5, 3), (((2,), (1,)), ((0,), (0,)))),  # batched
    ((4, 2, 5), (5, 3, 2), (((2,), (0,)), ((1,), (2,)))),  # batched, batch dims not leading: packed
    ((3, 4, 5), (5, 6, 3), (((0, 2), (2, 0)), ((), ()))),  # two contracting dims: packed
    ((7,), (7,), (((0,), (0,)), ((), ()))),  # inner product
    ((7,), (3,), (((), ()), ((), ()))),  # outer product
    ((0, 5), (5, 3), (((1,), (0,)), ((), ()))),  # empty result
    ((4, 0), (0, 3), (((1,), (0,)), ((), ()))),  # k == 0: zeros
    ((40, 50), (50, 30), (((1,), (0,)), ((), ()))),  # big enough for BLAS
    ((3, 40, 50), (3, 30, 50), (((2,), (2,)), ((0,), (0,)))),  # batched BLAS, rhs transposed
]


@pytest.mark.parametrize("blas", [True, False], ids=["blas", "loop"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32], ids=lambda d: np.dtype(d).name)
def test_dot_general(dtype, blas, monkeypatch):
    monkeypatch.setattr(lowering_dot, "USE_BLAS", blas)
    # Summation order differs (BLAS blocking vs NumPy's matmul): absolute tolerance
    # relative to the size of the terms (|entries| <= 3, k <= 50).
    tol = {np.dtype(np.float64): (1e-13, 1e-12), np.dtype(np.float32): (1e-5, 1e-4)}.get(np.dtype(dtype), (None, 0))
    for xs, ys, dn in MATMUL_CASES:
        check(lambda a, b: lax.dot_general(a, b, dn), sample(xs, dtype), sample(ys, dtype), rtol=tol[0], atol=tol[1])


def test_dot_with_fused_operand_and_blas_used():
    x, y = sample((64, 48), np.float64), sample((48, 32), np.float64)
    exe = check(lambda a, b: fnp.tanh(a @ (b * 2.0)) @ b.T, x, y, rtol=1e-13, atol=1e-12)
    if lowering_dot.find_blas() is not None and lowering_dot.USE_BLAS:
        assert "fg_blas_dgemm" in exe.llvm_ir_unoptimized


# --- indexing ---------------------------------------------------------------------------------
def test_dynamic_slices_clamp():
    x = sample((5, 6), np.float64)
    for s in [(0, 0), (2, 3), (-4, 9), (100, -100)]:
        i, j = np.int64(s[0]), np.int32(s[1])
        check(lambda a, i, j: lax.dynamic_slice(a, (i, j), (2, 3)), x, i, j)
        check(lambda a, u, i, j: lax.dynamic_update_slice(a, u, (i, j)), x, sample((2, 3), np.float64), i, j)


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather(mode):
    x = sample((5, 4, 3), np.float64)
    idx = np.array([[0, 1], [4, 3], [-1, 2], [7, 0], [2, -9]], np.int64)
    check(lambda a, i: lax.gather(a, i, mode=mode), x, idx)
    check(lambda a, i: lax.gather(a, i, mode=mode, fill_value=-1.0), x, idx[:, :1].astype(np.int32))
    check(lambda a, i: lax.gather(a, i, mode=mode), sample((6,), np.int32), idx[:, :1])


@pytest.mark.parametrize("kind", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("mode", ["clip", "drop"])
def test_scatter(kind, mode):
    x = sample((5, 3), np.float64)
    idx = np.array([[0], [4], [-1], [7], [2], [2]], np.int64)
    check(lambda a, i, u: lax.scatter(a, i, u, kind=kind, mode=mode), x, idx, sample((6, 3), np.float64))
    xi = sample((4, 4), np.int32)
    idx2 = np.array([[0, 1], [3, 3], [0, 1], [5, 0]], np.int32)
    check(lambda a, i, u: lax.scatter(a, i, u, kind=kind, mode=mode), xi, idx2, sample((4,), np.int32))


# --- fusion, buffers, IR -----------------------------------------------------------------------------
def _core_ir(exe):
    text = exe.llvm_ir_unoptimized
    start = text.index("@fg_main_core")
    return text[start:text.index("\n}", start)]


def test_fused_chain_has_no_intermediate_buffers():
    x, y = sample((100, 10), np.float64), sample((100, 10), np.float64)
    # rtol 1e-14: exp and sin are funcgrad's own vector math (<= 1 ulp, not bitwise glibc)
    # and ``... - b / 3.0`` cancels, amplifying 1-ulp differences.
    exe = check(lambda a, b: fnp.exp(a * b + 1.0) * fnp.sin(a) - b / 3.0, x, y, rtol=1e-14)
    core = _core_ir(exe)
    assert exe.stats["intermediate_buffers"] == 0 and exe.stats["workspace_bytes"] == 0
    assert "alloca" not in core and "malloc" not in core
    assert core.count("phi i64") == 1  # one flat loop over all 1000 elements
    assert core.count("store ") == 1


def test_reduction_absorbs_producers():
    x = sample((50, 20), np.float64)
    exe = check(lambda a: (fnp.sum(a * a), fnp.sum(fnp.exp(a) * 2.0, axis=0)), x, rtol=1e-13)
    assert exe.stats["workspace_bytes"] == 0 and exe.stats["intermediate_buffers"] == 0
    core = _core_ir(exe)
    assert "alloca" not in core and "malloc" not in core
    assert "fadd reassoc" in core and "fmul double" in core  # elementwise multiply stays strict


def test_shared_expensive_value_is_materialised_once_and_buffers_reused():
    x = sample((30, 40), np.float64)

    def f(a):
        e = fnp.exp(a)  # needed by two reductions: one buffer, not computed twice
        s = fnp.sum(e, axis=1)
        m = fnp.max(e, axis=0)
        g = fnp.log(a * a + 1.0)  # another shared value; e is dead by then
        return s, m, fnp.sum(g, axis=0), fnp.min(g, axis=1)

    exe = check(f, x, rtol=1e-13)
    assert exe.stats["intermediate_buffers"] == 2
    assert exe.stats["workspace_bytes"] == 30 * 40 * 8  # the two buffers share memory
    assert _core_ir(exe).count("call double @fg_vm_exp_f64(") == 1  # exp: lowering/vecmath.py


def test_dce_and_cse():
    x = sample((8,), np.float64)
    exe = check(lambda a: (fnp.sin(a) + fnp.sin(a), fnp.cos(a) * 0.0 + 1.0)[0], x)
    names = [e.primitive.name for e in exe.jaxpr.eqns]
    assert names.count("sin") == 1 and "cos" not in names


def test_outputs_are_new_arrays_including_passthrough():
    x = sample((3,), np.float64)
    exe = compile_jaxpr(fg.make_jaxpr(lambda a: (a, a * 2, a * 2, 1.5))(x))
    outs = exe(x)
    assert outs[0] is not x and np.array_equal(outs[0], x)
    assert outs[1] is not outs[2] and np.array_equal(outs[1], outs[2])
    assert outs[3].shape == () and outs[3] == 1.5


def test_constants_and_scalar_arguments():
    c = np.arange(6.0).reshape(2, 3)
    exe = check(lambda a, s: a * c + s, sample((2, 3), np.float64), np.float64(0.5))
    a = sample((2, 3), np.float64)
    want = a * c + 0.5
    for s in (np.float64(0.5), 0.5, np.array(0.5)):
        np.testing.assert_array_equal(exe(a, s)[0], want)


def test_slow_path_arguments():
    exe = compile_jaxpr(fg.make_jaxpr(lambda a, b: a + b)(np.zeros((2, 3)), np.zeros(3, np.int32)))
    a = np.arange(12.0).reshape(3, 4)[:2, :3]  # not contiguous
    b = np.arange(3, dtype=">i4")  # non-native byte order
    np.testing.assert_array_equal(exe(a, b)[0], a + np.arange(3))
    np.testing.assert_array_equal(exe(a.tolist(), [0, 1, 2])[0], a + np.arange(3))
    with pytest.raises(TypeError, match="shape"):
        exe(np.zeros((3, 2)), b)
    with pytest.raises(TypeError, match="dtype"):
        exe(np.zeros((2, 3), np.float32), b)


def test_big_inputs_release_gil_and_use_heap_workspace():
    x = sample((400, 300), np.float64)

    def f(a):
        e = fnp.exp(a)
        return fnp.sum(e, axis=1), fnp.max(e, axis=0)

    exe = check(f, x, rtol=1e-13)
    assert exe.stats["release_gil"] and exe.stats["workspace_bytes"] > 64 * 1024


def test_unsupported_primitive_raises_lowering_error_with_equation(monkeypatch):
    from funcgrad.core.prims.sort import sort_p

    monkeypatch.delitem(lower_rules, sort_p)  # (sort lowers now: pretend it does not)

    def f(x):
        y = fnp.sin(x)
        return fnp.sort(y) * 2.0

    closed = fg.make_jaxpr(f)(np.arange(3.0))
    with pytest.raises(LoweringError) as info:
        compile_jaxpr(closed)
    msg = str(info.value)
    assert "sort" in msg and "--> " in msg and "sin a" in msg


def test_negative_integer_pow_is_a_lowering_error():
    closed = fg.make_jaxpr(lambda a: lax.integer_pow(a, -2))(np.arange(3))
    with pytest.raises(LoweringError, match="integer_pow"):
        compile_jaxpr(closed)


def test_compile_cache_reuses_machine_code():
    x = sample((4,), np.float64)
    e1 = compile_jaxpr(fg.make_jaxpr(lambda a: fnp.cosh(a) * 3.0)(x))
    e2 = compile_jaxpr(fg.make_jaxpr(lambda a: fnp.cosh(a) * 3.0)(x))
    assert e1._entry is not e2._entry
    assert ctypes_address(e1._entry) == ctypes_address(e2._entry)


def ctypes_address(fn):
    import ctypes

    return ctypes.cast(fn, ctypes.c_void_p).value


# --- the op table -----------------------------------------------------------------------------------
def _complex_unlowered(jaxpr) -> set:
    """Names (``"<prim> (complex)"``) of primitives applied to complex values whose rule
    does not handle them (dot_general, fft until their branches land): jit sends those
    programs to the evaluator (``check_supported``)."""
    from funcgrad.lowering.context import COMPLEX_LOWERED

    def cplx(v):
        return np.dtype(getattr(v.aval, "dtype", np.float64)).kind == "c"

    return {f"{e.primitive.name} (complex)" for e in jaxpr.eqns
            if e.primitive not in COMPLEX_LOWERED and any(cplx(v) for v in list(e.inputs) + list(e.outputs))}


_TOL = {np.dtype(np.float64): 1e-13, np.dtype(np.float32): 1e-5, np.dtype(np.complex128): 1e-13,
        np.dtype(np.complex64): 1e-5}  # (reductions reassociate)


def _row_compiles_and_matches(closed, leaves):
    got = compile_jaxpr(closed)(*leaves)
    want = fg.eval_closed_jaxpr(closed, *leaves)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert_matches([g], [w], _TOL.get(w.dtype))


def _batch_compiles_and_matches(batch):
    """The rows of ``batch`` as one program (one compile instead of one per row: the
    programs are independent, each row's equations as its own jaxpr has them)."""
    def combined(*flat):
        outs, i = [], 0
        for _, closed, leaves in batch:
            outs.extend(fg.eval_closed_jaxpr(closed, *flat[i:i + len(leaves)]))
            i += len(leaves)
        return outs

    flat = [x for _, _, leaves in batch for x in leaves]
    _row_compiles_and_matches(inline_calls(fg.make_jaxpr(combined)(*flat)), flat)


def test_op_table_rows_compile_and_match():
    """Every op-table row whose jaxpr uses only lowered primitives compiles and matches
    the evaluator (float64 within 1e-13, float32 within 1e-5, ints/bools exactly).
    Rows compile 40 to a program; a program that fails is checked row by row, so a
    failure names its row."""
    from op_rows import all_rows

    compared, skipped, failures, ready = 0, {}, [], []
    for row in all_rows():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                closed = inline_calls(fg.make_jaxpr(row.fun)(*row.args))  # (as jit does)
            except Exception:  # rows that only run eagerly are covered elsewhere
                skipped["make_jaxpr"] = skipped.get("make_jaxpr", 0) + 1
                continue
        missing = sorted({e.primitive.name for e in closed.jaxpr.eqns if e.primitive not in lower_rules})
        missing += sorted(_complex_unlowered(closed.jaxpr))
        if missing:
            for m in missing:
                skipped[m] = skipped.get(m, 0) + 1
            continue
        ready.append((row, closed, tree_flatten(row.args)[0]))
    for start in range(0, len(ready), 40):
        batch = ready[start:start + 40]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                _batch_compiles_and_matches(batch)
                compared += len(batch)
                continue
            except Exception:
                pass
            for row, closed, leaves in batch:  # find the row(s)
                try:
                    _row_compiles_and_matches(closed, leaves)
                    compared += 1
                except Exception as err:  # collect them all, report at the end
                    failures.append(f"{row.name}: {type(err).__name__}: {str(err)[:300]}")
    print(f"\nop table: {compared} rows compiled and matched; skipped (missing lower rule): {skipped}", file=sys.stderr)
    assert not failures, "\n".join(failures)
    assert compared > 1500
