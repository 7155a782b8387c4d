"""Complex values in compiled code (issue #16, the native lowering): every complex
primitive under ``jit`` against eager (values and dtypes), compiled for real (no evaluator
fallback), on values chosen to hit signed zeros, inf/nan components, branch cuts and
huge/tiny magnitudes."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.errors import LoweringError
from funcgrad.lowering import compile_jaxpr
from funcgrad.lowering.inline import inline_calls
from funcgrad.tree_util import tree_flatten

CDTYPES = [np.complex128, np.complex64]
_INF, _NAN = np.inf, np.nan
# components: signed zeros, ones, small/huge, inf, nan (every pair is one sample)
_PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-300, 3e300, _INF, -_INF, _NAN]


def special_values(dtype) -> np.ndarray:
    re, im = np.meshgrid(_PARTS, _PARTS)
    z = np.empty(re.size, dtype)
    with np.errstate(over="ignore"):
        z.real, z.imag = re.ravel(), im.ravel()
    return z


def random_values(dtype, n=64, seed=0, scale=3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.normal(size=n) * scale + 1j * rng.normal(size=n) * scale).astype(dtype)


def compiled(f, *args):
    """``f`` compiled (raises if any equation would fall back to the evaluator) and run."""
    closed = inline_calls(fg.make_jaxpr(f)(*args))
    leaves, _ = tree_flatten(args)
    return compile_jaxpr(closed)(*leaves)


def check(f, *args, rtol=None, exact=False):
    """jit(f) == f on ``args``: dtypes equal, values bitwise (``exact``) or within ``rtol``
    (per component, relative to the component's magnitude; inf/nan in the same places)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = f(*args)
        got = compiled(f, *args)
    want, _ = tree_flatten(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if exact or w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
            if w.dtype.kind in "fc":  # signed zeros too (a nan's sign is not specified)
                for gp, wp in ((g.real, w.real), (g.imag, w.imag)):
                    num = ~np.isnan(wp)
                    assert np.array_equal(np.signbit(gp[num]), np.signbit(wp[num]))
            continue
        tol = rtol or (2e-15 if w.dtype in (np.complex128, np.float64) else 2e-6)
        for gp, wp in ((g.real, w.real), (g.imag, w.imag)) if w.dtype.kind == "c" else ((g, w),):
            np.testing.assert_allclose(gp, wp, rtol=tol, atol=0, equal_nan=True)
    return got


# --- the base slice: loads/stores, parts, arithmetic, casts, layout ---------------------------
@pytest.mark.parametrize("dtype", CDTYPES)
def test_arithmetic_and_parts_are_bitwise(dtype):
    z, w = special_values(dtype), special_values(dtype)[::-1].copy()
    check(lambda z, w: (z + w, z - w, z * w, -z, lax.conj(z), lax.real(z), lax.imag(z)), z, w, exact=True)
    x, y = random_values(dtype), random_values(dtype, seed=1)
    check(lambda x, y: (x * y + x, x * (y - 1j), lax.complex(lax.imag(x), lax.real(y))), x, y, exact=True)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_comparisons_select_and_casts(dtype):
    z = special_values(dtype)
    w = np.roll(z, 3)
    real = np.float32 if dtype == np.complex64 else np.float64
    check(lambda z, w: (z == w, z != w, z == z, fnp.where(lax.real(z) > 0, z, w)), z, w, exact=True)
    check(lambda z: (lax.convert_element_type(z, np.dtype(np.complex128)),
                     lax.convert_element_type(z, np.dtype(np.complex64)),
                     lax.convert_element_type(z, np.dtype(real)),
                     lax.convert_element_type(lax.real(z), np.dtype(np.int32)),
                     lax.convert_element_type(np.arange(z.size, dtype=np.int16), np.dtype(dtype))), z, exact=True)


def test_layout_primitives_and_python_complex_constants():
    z = random_values(np.complex128, 24).reshape(2, 3, 4)
    check(lambda z: (z.T, z.reshape(6, 4)[::2], fnp.concatenate([z, z * 2j], axis=1), z[:, 1],
                     fnp.broadcast_to(z[0, 0, 0], (3, 2)), fnp.pad(z, 1), z[..., ::-1] + (1 - 2j)), z, exact=True)
    check(lambda z, i: (fnp.asarray(z)[i], fnp.asarray(z).at[i].add(3j), fnp.asarray(z).at[i].multiply(1 + 1j)),
          z.reshape(-1), np.array([0, 5, 5, 23]), exact=True)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_sums_and_products(dtype):
    z = random_values(dtype, 60).reshape(3, 4, 5)
    check(lambda z: (fnp.sum(z), fnp.sum(z, axis=1), fnp.sum(z, axis=(0, 2))), z, rtol=1e-12
          if dtype == np.complex128 else 1e-5)
    check(lambda z: (fnp.prod(z, axis=2), fnp.cumsum(z, axis=1), fnp.cumprod(z, axis=2)), z, exact=True)


def test_complex_arguments_take_the_fast_entry_and_scalars():
    f = fg.jit(lambda z, s: z * s + 1j)
    z = random_values(np.complex128, 5)
    for s in (np.complex128(2 - 1j), 2 - 1j, np.asarray(2 - 1j)):
        np.testing.assert_array_equal(np.asarray(f(z, s)), z * (2 - 1j) + 1j)
    g = fg.jit(lambda z: z * 2)
    assert np.asarray(g(np.complex64(1 + 2j))).dtype == np.complex64
    # the native entry itself accepts them (status 0: no slow-path conversion)
    exe = compile_jaxpr(fg.make_jaxpr(lambda z, s: z * s)(z, 1j))
    for s in (2 - 1j, np.complex128(2 - 1j), np.asarray(2 - 1j)):
        out = np.empty(5, np.complex128)
        assert exe._entry((z, s, out)) == 0
        np.testing.assert_array_equal(out, z * (2 - 1j))
    exe64 = compile_jaxpr(fg.make_jaxpr(lambda z: z * 2)(np.complex64(1)))
    out64 = np.empty((), np.complex64)
    assert exe64._entry((np.complex64(1 + 2j), out64)) == 0 and out64 == 2 + 4j


def test_jit_of_complex_code_does_not_fall_back():
    from funcgrad.transforms import jit as jit_mod

    before = {id(e) for e in jit_mod._executables}
    f = fg.jit(lambda z: fnp.sum(z * fnp.conj(z)).real)
    f(random_values(np.complex128, 8))
    new = [e for e in jit_mod._executables if id(e) not in before]
    assert new and not any(isinstance(e, jit_mod._Interpreted) for e in new)


def test_unlowered_complex_primitive_is_rejected_by_name():
    # check_supported names the primitive (jit then runs the evaluator, which agrees).
    from funcgrad.core.prims.sort import sort_p
    from funcgrad.lowering.context import COMPLEX_LOWERED

    z = random_values(np.complex128, 6)
    COMPLEX_LOWERED.discard(sort_p)  # (complex sort compiles now: pretend it does not)
    try:
        with pytest.raises(LoweringError, match="'sort' on complex values"):
            compiled(lambda z: lax.sort(z), z)
        np.testing.assert_array_equal(np.asarray(fg.jit(lambda z: lax.sort(z))(z)), np.sort(z))
    finally:
        COMPLEX_LOWERED.add(sort_p)


# --- the elementwise family: bitwise equal to NumPy (the same C functions and formulas) ---------
_UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan",
          "arcsinh", "arccosh", "arctanh", "log2", "log10", "log1p", "expm1", "abs", "sign", "isfinite",
          "isnan", "isinf", "square", "reciprocal", "angle"]


def _samples(dtype):
    """Special values (signed zeros, inf/nan parts, branch cuts on the axes), random
    values at three scales (tiny, order one, huge)."""
    return np.concatenate([special_values(dtype), random_values(dtype, 40),
                           random_values(dtype, 20, seed=2, scale=1e-5), random_values(dtype, 20, seed=3, scale=1e30)])


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", _UNARY)
def test_unary_functions_match_numpy_bitwise(name, dtype):
    # (angle is the real atan2 of the parts: the real lowering's vectorised atan2, ~1 ulp)
    check(getattr(fnp, name), _samples(dtype), exact=name != "angle")


@pytest.mark.parametrize("dtype", CDTYPES)
def test_division_power_and_integer_powers_bitwise(dtype):
    z = _samples(dtype)
    w = np.array([0, 1, 2, 3, -1, -2, -3, 5, 0.5, -0.5, 99, 100, 1 + 1j, 1j, np.nan, np.inf, 2.5 - 1j, -7, 1e300],
                 dtype)
    zz, ww = np.repeat(z, len(w)), np.tile(w, len(z))
    check(lambda a, b: (a / b, b / a, a ** b), zz, ww, exact=True)
    check(lambda z: [lax.integer_pow(z, n) for n in (0, 1, 2, 3, 4, 7, -1, -3, 13, 99, 100, -150)], z, exact=True)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_lexicographic_order_max_min_and_arg_reductions(dtype):
    z = special_values(dtype)
    w = np.roll(z, 7)
    check(lambda z, w: (z < w, z <= w, z > w, z >= w, fnp.maximum(z, w), fnp.minimum(z, w)), z, w, exact=True)
    r = random_values(dtype, 60).reshape(6, 10)
    r[2, 3], r[4, 1], r[0, 0] = np.nan, complex(1, np.nan), r[0, 5]  # nans in both parts; a tie
    for a in (r, np.round(r), special_values(dtype).reshape(11, 11)):
        check(lambda a: (fnp.max(a, axis=1), fnp.min(a, axis=0), fnp.max(a), fnp.argmax(a, axis=1),
                         fnp.argmin(a, axis=0), fnp.argmax(a)), a, exact=True)


# --- control flow, tapes, transforms under jit -------------------------------------------------------
def test_loop_carries_and_cond_of_complex_type():
    z = random_values(np.complex128, 6) * 0.3

    def loops(z):
        a = lax.fori_loop(0, 5, lambda i, c: c * z + 1j, z)
        b = lax.while_loop(lambda c: fnp.abs(c[0]) < 50.0, lambda c: (c[0] * (1.5 + 0.5j), c[1] + 1), (z[0] + 1, 0))
        s = lax.scan(lambda c, x: (c * x + 1, c.real), 1 + 0j, z)
        c = lax.cond(z[0].real > 0, lambda v: v * 2j, lambda v: -v, z)
        return a, b, s, c

    # (0-d products: NumPy's scalar math has no FMA, its loops do -> 1 ulp)
    check(loops, z, rtol=1e-15)
    check(loops, z.astype(np.complex64), rtol=1e-6)


def test_grad_of_a_real_loss_through_compiled_loops_matches_eager():
    z = random_values(np.complex128, 6) * 0.3

    def loss_fori(z):
        c = lax.fori_loop(0, 4, lambda i, c: c * z + fnp.sin(c), z)
        return fnp.sum(fnp.abs(c) ** 2)

    def loss_while(z):  # reverse mode through a while loop: a run-time tape of complex values
        c = lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * z + fnp.exp(1j * c[0]), c[1] + 1), (z, 0))[0]
        return fnp.sum((c * fnp.conj(c)).real) + fnp.max(c).imag

    for loss in (loss_fori, loss_while):
        want = fg.grad(loss)(z)
        (got,) = compiled(fg.grad(loss), z)
        assert got.dtype == want.dtype == np.complex128
        np.testing.assert_allclose(got, want, rtol=1e-13)
        np.testing.assert_allclose(np.asarray(fg.jit(fg.grad(loss))(z)), want, rtol=1e-13)


def test_vmap_and_jvp_under_jit():
    zz = random_values(np.complex128, 12).reshape(3, 4)
    v = fg.vmap(lambda z: fnp.sum(fnp.exp(z) * z) / (1 + fnp.abs(z[0])))
    check(v, zz, rtol=1e-14)
    want = np.stack([v(zz[i:i + 1])[0] for i in range(3)])
    np.testing.assert_allclose(np.asarray(fg.jit(v)(zz)), want, rtol=1e-14)
    f = fg.jit(lambda z, t: fg.jvp(lambda u: fnp.log(u) * u ** 3, (z,), (t,)))
    z, t = zz[0], random_values(np.complex128, 4, seed=5)
    for g, w in zip(f(z, t), fg.jvp(lambda u: fnp.log(u) * u ** 3, (z,), (t,))):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-14)


def test_large_nests_split_across_threads_deterministically():
    z = random_values(np.complex128, 100_000)
    f = fg.jit(lambda z: (fnp.exp(z * 1e-3) * fnp.sum(z), fnp.sum(z * z), fnp.argmax(z)))
    a, b = f(z), f(z)
    for x, y, w in zip(a, b, (np.exp(z * 1e-3) * np.sum(z), np.sum(z * z), np.argmax(z))):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))  # the same bits every call
        np.testing.assert_allclose(np.asarray(x), w, rtol=1e-11)


# --- sort with complex keys (NumPy's sort order: R+Rj < R+nanj < nan+Rj < nan+nanj) ------------
def _sort_samples(dtype) -> np.ndarray:
    """Every (re, im) pair of special parts twice, shuffled: ties (±0, repeated values) and
    nans in either or both parts, so stability and the nan placements are both exercised."""
    z = special_values(dtype)
    return np.concatenate([z, z])[np.random.default_rng(3).permutation(2 * z.size)]


@pytest.mark.parametrize("dtype", CDTYPES)
def test_sort_argsort_sort_complex_compile_bitwise(dtype):
    z = _sort_samples(dtype)
    check(lambda a: (fnp.sort(a), fnp.argsort(a), fnp.sort_complex(a)), z, exact=True)
    np.testing.assert_array_equal(np.asarray(fg.jit(fnp.argsort)(z)), np.argsort(z, kind="stable"))
    np.testing.assert_array_equal(np.asarray(fg.jit(fnp.sort)(z)), np.sort(z))  # NumPy's own order
    m = z[:120].reshape(12, 10)  # along either axis of a matrix
    check(lambda a: (fnp.sort(a, axis=0), fnp.argsort(a, axis=1), fnp.sort(a, axis=None)), m, exact=True)


def test_multi_operand_complex_sort_and_lexsort():
    z = _sort_samples(np.complex128)
    r = np.round(np.random.default_rng(4).normal(size=z.size)).astype(np.float32)
    i = np.arange(z.size) % 5
    # lax.sort: two keys (complex primary, then a float) carrying an int payload; then a
    # real primary key with a complex secondary one; lexsort's last key is its primary.
    check(lambda z, r, i: (lax.sort((z, r, i), num_keys=2), lax.sort((r, z, i), num_keys=2),
                           fnp.lexsort((z, r)), fnp.lexsort((i, z))), z, r, i, exact=True)
    np.testing.assert_array_equal(np.asarray(fg.jit(fnp.lexsort)((z, r))), np.lexsort((z, r)))


def test_vmap_of_complex_sort_under_jit():
    zz = _sort_samples(np.complex64)[:96].reshape(4, 24)
    f = fg.vmap(lambda z: (fnp.sort(z), fnp.argsort(-z)))
    check(f, zz, exact=True)
    got = fg.jit(f)(zz)
    for k in range(4):
        np.testing.assert_array_equal(np.asarray(got[0])[k], np.sort(zz[k]))
        np.testing.assert_array_equal(np.asarray(got[1])[k], np.argsort(-zz[k], kind="stable"))


# --- host callbacks with complex operands ----------------------------------------------------
def test_callbacks_with_complex_operands_compile(capsys):
    def f(z):
        fg.debug.print("z={z}", z=z)
        w = fg.pure_callback(lambda a: np.conj(a) * 2, fg.ShapeDtypeStruct(z.shape, z.dtype), z * 1j)
        return w + z

    for dtype in (np.complex64, np.complex128):
        z = np.array([1 + 2j, 3 - 1j], dtype)
        got = compiled(f, z)[0]
        want = np.conj(z * 1j) * 2 + z
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert capsys.readouterr().out == f"z={z}\n"
