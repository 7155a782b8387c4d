"""funcgrad.lax.reduce_window against an element-by-element NumPy loop written from XLA's
definition (init_value combined with every window element; padding and base-dilation
holes take no part); pooling derivatives (max pooling's goes to the first maximum, as
JAX's select-and-scatter), vmap against a loop, jit against eager, errors."""
import operator

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.test_util import check_grads

from harness import assert_same, compiled_and_evaluated

RNG = np.random.default_rng(1)


def ref_reduce_window(x, init, op, window, strides, pads, base_dil=None, win_dil=None):
    nd = x.ndim
    base_dil, win_dil = base_dil or (1,) * nd, win_dil or (1,) * nd
    padded = [((n - 1) * b + 1 if n else 0) + lo + hi for n, b, (lo, hi) in zip(x.shape, base_dil, pads)]
    eff = [(w - 1) * d + 1 if w else 0 for w, d in zip(window, win_dil)]
    out_shape = [(p - e) // s + 1 if p >= e else 0 for p, e, s in zip(padded, eff, strides)]
    out = np.empty(out_shape, x.dtype)
    for o in np.ndindex(*out_shape):
        acc = init
        for k in np.ndindex(*window):
            pos = [oi * s + ki * d - lo for oi, s, ki, d, (lo, _) in zip(o, strides, k, win_dil, pads)]
            if any(p % b for p, b in zip(pos, base_dil)):
                continue  # a base-dilation hole
            idx = tuple(p // b for p, b in zip(pos, base_dil))
            if all(0 <= i < n for i, n in zip(idx, x.shape)):
                acc = op(acc, x[idx])
        out[o] = acc
    return out


def _same_pads(shape, window, strides, lower=False):
    pads = []
    for n, k, s in zip(shape, window, strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        pads.append((total - total // 2, total // 2) if lower else (total // 2, total - total // 2))
    return pads


CASES = [  # shape, window, strides, padding, base dilation, window dilation
    ((7,), (3,), (2,), "VALID", None, None),
    ((2, 6, 7, 3), (1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None),
    ((6, 7), (3, 3), (1, 1), "SAME", None, None),
    ((5, 6), (2, 3), (2, 1), "SAME_LOWER", None, (1, 2)),
    ((4, 5), (2, 2), (1, 2), [(1, 2), (-1, 1)], (2, 1), None),
    ((3, 4, 5), (2, 1, 3), (1, 1, 2), [(0, 1), (1, 0), (2, 2)], (1, 2, 1), (2, 1, 1)),
    ((3, 3), (5, 5), (1, 1), "VALID", None, None),  # empty output
]
OPS = {"add": (lax.add, 0.0, operator.add), "max": (lax.max, -np.inf, max), "min": (lax.min, np.inf, min),
       "mul": (lax.mul, 1.0, operator.mul)}


def _explicit(case):
    shape, window, strides, padding, bd, wd = case
    if isinstance(padding, str):
        eff = [(w - 1) * d + 1 for w, d in zip(window, wd or (1,) * len(window))]
        return [(0, 0)] * len(shape) if padding == "VALID" else _same_pads(shape, eff, strides, padding == "SAME_LOWER")
    return padding


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_values_against_loop(case, op):
    shape, window, strides, padding, bd, wd = case
    fn, init, pyop = OPS[op]
    x = RNG.uniform(0.5, 1.5, shape)
    got = lax.reduce_window(x, init, fn, window, strides, padding, bd, wd)
    want = ref_reduce_window(x, init, pyop, window, strides, _explicit(case), bd, wd)
    assert_same(got, want, rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_dtypes_non_identity_init_and_jit(dtype):
    x = (RNG.standard_normal((2, 5, 6)) * 4).astype(dtype)
    init = dtype(3)

    def f(x):
        return (lax.reduce_window(x, init, lax.max, (1, 2, 3), (1, 1, 2), "SAME"),
                lax.reduce_window(x, init, lax.add, (1, 2, 2), (1, 2, 1), [(0, 0), (1, 0), (0, 1)], (1, 1, 2)))

    eager = f(x)
    pads = _same_pads((2, 5, 6), (1, 2, 3), (1, 1, 2))
    assert_same(eager[0], ref_reduce_window(x, init, max, (1, 2, 3), (1, 1, 2), pads))
    assert_same(eager[1], ref_reduce_window(x, init, operator.add, (1, 2, 2), (1, 2, 1),
                                            [(0, 0), (1, 0), (0, 1)], (1, 1, 2)), rtol=1e-5)
    assert_same(fg.jit(f)(x), eager, rtol=1e-6)
    compiled, _ = compiled_and_evaluated(f, x)  # native code, no fallback
    assert_same(list(compiled), list(eager), rtol=1e-6, check_type=False)


def test_general_computation_and_pytrees():
    x = RNG.standard_normal((5, 6))
    got = lax.reduce_window(x, 0.5, lambda a, b: a + b * b, (2, 3), (1, 2), [(1, 0), (0, 1)], (1, 1), (2, 1))
    want = ref_reduce_window(x, 0.5, lambda a, b: a + b * b, (2, 3), (1, 2), [(1, 0), (0, 1)], None, (2, 1))
    assert_same(got, want, rtol=1e-13)
    # a (value, index) argmax over each window: pytree operands, as JAX's variadic form
    idx = np.arange(30.0).reshape(5, 6)

    def argmax_step(acc, xs):
        take = xs[0] > acc[0]
        return fnp.where(take, xs[0], acc[0]), fnp.where(take, xs[1], acc[1])

    vals, where = lax.reduce_window((x, idx), (-np.inf, -1.0), argmax_step, (2, 2), (2, 2), "VALID")
    blocks = x[:4, :6].reshape(2, 2, 3, 2).transpose(0, 2, 1, 3).reshape(2, 3, 4)
    assert_same(vals, blocks.max(-1))
    assert_same(np.asarray(x.flat[where.astype(int)]), blocks.max(-1))


def test_recognises_numpy_functions():
    x = RNG.standard_normal((6, 4))
    for fn, lfn, init in ((fnp.maximum, lax.max, -np.inf), (fnp.add, lax.add, 0.0), (fnp.multiply, lax.mul, 1.0)):
        assert_same(lax.reduce_window(x, init, fn, (3, 2), (1, 1), "SAME"),
                    lax.reduce_window(x, init, lfn, (3, 2), (1, 1), "SAME"))
    text = str(fg.make_jaxpr(lambda x: lax.reduce_window(x, -np.inf, fnp.maximum, (3, 2), (1, 1), "SAME"))(x))
    assert "select_n" in text and "pad" in text


# --- pooling derivatives ------------------------------------------------------------------
def max_pool(x, window=(2, 2), strides=(2, 2), padding="VALID"):
    return lax.reduce_window(x, -np.inf, lax.max, window, strides, padding)


def avg_pool(x, window=(3, 3), strides=(1, 1), padding="SAME"):
    return lax.reduce_window(x, 0.0, lax.add, window, strides, padding) / np.prod(window)


def test_max_pool_gradient_goes_to_first_maximum():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 5.0, 5.0], [0.0, 0.0, 7.0, 7.0], [0.0, 0.0, 7.0, 7.0]])
    g = fg.grad(lambda x: max_pool(x).sum())(x)
    assert_same(g, np.array([[0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 1, 0], [0, 0, 0, 0.0]]))
    # overlapping windows: each window sends its cotangent to its first maximum
    ct = RNG.standard_normal((3, 3))
    got = fg.vjp(lambda x: max_pool(x, (2, 2), (1, 1)), x)[1](ct)[0]
    want = np.zeros_like(x)
    for i in range(3):
        for j in range(3):
            k = int(np.argmax(x[i:i + 2, j:j + 2]))  # NumPy's argmax: the first one
            want[i + k // 2, j + k % 2] += ct[i, j]
    assert_same(got, want, rtol=1e-14)
    assert_same(fg.jit(fg.grad(lambda x: max_pool(x).sum()))(x), g)


def test_pooling_derivatives_against_finite_differences():
    x = RNG.standard_normal((5, 6))  # distinct values: max pooling is differentiable there
    check_grads(lambda x: max_pool(x, (2, 3), (1, 2), "SAME"), (x,), order=2, modes=("fwd", "rev"))
    check_grads(avg_pool, (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), [(1, 0), (0, 1)]), (x,), order=1)
    check_grads(lambda x: lax.reduce_window(x, 0.0, lambda a, b: a + fnp.sin(b), (2, 2), (1, 1), "SAME"), (x,),
                order=1)


def test_vmap_matches_loop():
    xs = RNG.standard_normal((3, 5, 6))
    for f in (max_pool, avg_pool, lambda x: lax.reduce_window(x, 2.0, lambda a, b: a * b, (2, 2), (1, 1), "SAME")):
        assert_same(fg.vmap(f)(xs), np.stack([f(x) for x in xs]), rtol=1e-14)
        assert_same(fg.vmap(f, in_axes=1)(xs), np.stack([f(xs[:, i]) for i in range(5)]), rtol=1e-14)


def test_nan_propagates_through_max_pool():
    x = np.array([[1.0, np.nan], [2.0, 0.0]])
    assert np.isnan(max_pool(x)[0, 0])
    assert np.isnan(fg.jit(max_pool)(x)[0, 0])


# --- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,exc,words", [
    (dict(window_dimensions=(2,)), ValueError, ["reduce_window", "window_dimensions", "f64[4,5]"]),
    (dict(window_strides=(1, 0)), ValueError, ["reduce_window", "window_strides", "f64[4,5]"]),
    (dict(padding=[(1, 1)]), ValueError, ["reduce_window", "padding", "f64[4,5]"]),
    (dict(padding="FULL"), ValueError, ["padding", "'FULL'"]),
    (dict(padding=[(-5, 0), (0, 0)]), ValueError, ["reduce_window", "crops"]),
    (dict(init_value=np.zeros(3)), TypeError, ["reduce_window", "init_value", "scalar"]),
    (dict(init_value=(0.0, 1.0)), ValueError, ["reduce_window", "tree structure"]),
    (dict(computation=lambda a, b: (a + b).sum()), TypeError, ["reduce_window", "computation", "elementwise"]),
    (dict(computation="max"), TypeError, ["reduce_window", "callable"]),
])
def test_bad_input_raises_clear_errors(kwargs, exc, words):
    args = dict(operand=np.ones((4, 5)), init_value=0.0, computation=lambda a, b: a * b,
                window_dimensions=(2, 2), window_strides=(1, 1), padding="VALID")
    args.update(kwargs)
    with pytest.raises(exc) as info:
        lax.reduce_window(**args)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
