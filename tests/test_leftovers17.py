"""Correctness leftovers: the fuzzer keeps decisions off near-ties (seed 42452), complex
``square`` as NumPy's loop (overflow), ``vjp``'s cotangent dtype rule (JAX's), and the
real-only ``scipy.special`` logistic/entropy functions rejecting complex input."""
import numpy as np
import pytest
import scipy.special as ss

import funcgrad as fg
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
import funcgrad.scipy.special as fss
from fuzz.checks import run_checks
from fuzz.gen import NP, Gen, Term, generate, near_tie


def _bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = got.reshape(-1).view(got.real.dtype), want.reshape(-1).view(want.real.dtype)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_array_equal(g[~np.isnan(g)], w[~np.isnan(w)])


# --- 1. the fuzzer's decisions stay off near-ties -------------------------------------------
def test_seed_42452_really_was_a_tie():
    """The branch that differed: sum(outer(x1, x0)) is exactly 0 (the products cancel in
    pairs), NumPy's pairwise sum gives 0.0 and the compiled, reassociated sum a few ulps;
    within rounding of the threshold, as the near-tie margin says."""
    x0 = np.array([[-0.167, -1.993], [-1.741, 1.037]])
    x1 = np.array([[-3, -2], [2, 3]])
    eager = float(fnp.sum(fnp.outer(x1, x0)))
    jitted = float(fg.jit(lambda a, b: fnp.sum(fnp.outer(a, b)))(x1, x0))
    assert eager == 0.0 and abs(jitted) < 1e-14
    terms = np.outer(x1, x0)
    assert near_tie(eager, 0.0, scale=np.sum(np.abs(terms)))
    assert near_tie(jitted, 0.0, scale=np.sum(np.abs(terms)))


def test_seed_42452_program_passes():
    results = run_checks(generate(42452), only=("jit_vs_eager", "grad_jit_vs_grad"))
    assert {r.status for r in results.values()} <= {"pass", "skip"}, results


def _term(value, exact=False, text="v", lowp=False):
    return Term(lambda s: text, np.asarray(value), exact=exact, lowp=lowp)


def test_tie_free_comparisons():
    computed = _term([0.1 + 0.2, 1.0])  # 0.30000000000000004: computed, not exact
    literal = _term(0.3, exact=True)
    assert not Gen.tie_free(computed, literal)  # within rounding: either answer is right
    assert Gen.tie_free(computed, _term(0.31, exact=True))  # clearly apart
    assert Gen.tie_free(computed, computed)  # a value against itself: always the same
    assert Gen.tie_free(_term(0.3, exact=True), literal)  # exact tie of inputs/literals stays
    assert Gen.tie_free(_term(np.array([2, 3])), _term(np.array([2, 1])))  # ints are exact
    # computed through float32: float32's margin
    assert Gen.tie_free(_term(1.0 + 1e-7), literal) and not Gen.tie_free(_term(0.3 + 1e-7, lowp=True), literal)


def test_while_trip_test_off_ties():
    """``sum(c[1]) < limit`` checked on every iteration the loop decides: c doubles each
    step (sums 0.5, 1, 2, 4), so a limit within rounding of 2 is rejected, 2.5 is not, and
    a sum met only after the loop's last counted step does not matter."""
    g = Gen(0)
    o = _term([0.25, 0.25])
    body = Term(lambda s: "c[1] * 2.0", np.asarray([0.5, 0.5]))
    assert not g.trip_tie_free(o, body, 4, 2.0 + 1e-12)
    assert g.trip_tie_free(o, body, 4, 2.5)
    assert g.trip_tie_free(o, body, 2, 2.0 + 1e-12)  # only sums 0.5 and 1 are tested
    assert body.render(NP) == "c[1] * 2.0"


# --- 2. complex square: NumPy's loop ---------------------------------------------------------
_VALS = [0.0, -0.0, 1.5, -2.25, 1e308, -1e308, 1e-310, np.inf, -np.inf, np.nan, 1 + 2**-30]
_Z = np.array([complex(a, b) for a in _VALS for b in _VALS])


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_square_is_numpys_loop(dtype):
    """Bug: square(1e308+1e308j) gave nan+infj (power(x, 2)'s plain product); NumPy's
    square loop is the complex product with FMA: -inf+infj, and finite values bitwise."""
    z = _Z.astype(dtype) if dtype == np.complex128 else _Z[np.abs(_Z) < 1e30].astype(dtype)
    with np.errstate(all="ignore"):
        want = np.square(z)
        _bits_equal(fnp.square(z), want)
        _bits_equal(fg.jit(fnp.square)(z), want)
        _bits_equal(fnp.square(z[0]), np.square(np.asarray(z[0])))
    assert complex(fnp.square(np.complex128(1e308 + 1e308j))) == complex(-np.inf, np.inf)


def test_complex_square_derivatives_and_vmap():
    z, t = np.array([0.3 - 1.2j, 2.0 + 0.5j]), np.array([1.0 - 0.5j, 0.25j])
    _, tangent = fg.jvp(fnp.square, (z,), (t,))
    np.testing.assert_allclose(tangent, 2 * z * t, rtol=1e-14)
    np.testing.assert_allclose(fg.vmap(fnp.square)(z), [np.square(v) for v in z], rtol=0)
    # the real ones are unchanged (integer_pow): bools to int8, as NumPy
    assert fnp.square(np.array([True])).dtype == np.int8
    np.testing.assert_array_equal(fnp.square(np.array([3, -2])), [9, 4])


# --- 3. vjp: the cotangent has the output's dtype (JAX) ------------------------------------------
def test_vjp_rejects_cotangent_of_another_dtype():
    """Bug: a real cotangent for a complex output was accepted (cast, dropping nothing
    visibly but not what JAX allows); JAX raises a TypeError."""
    _, pull = fg.vjp(lambda x: x * (1 + 2j), 1.5)
    with pytest.raises(TypeError, match=r"vjp: cotangent 0 has dtype float64.*complex128"):
        pull(1.0)
    assert pull(np.complex128(1.0))[0] == 1.0
    _, pull32 = fg.vjp(lambda x: 2 * x, np.float32(3))
    for ct in (np.float64(1), np.float16(1)):
        with pytest.raises(TypeError, match=r"vjp: cotangent 0.*float(64|16)"):
            pull32(ct)
    assert pull32(np.float32(1))[0].dtype == np.float32
    _, pull_jit = fg.vjp(fg.jit(lambda x: (x, x * 2j)), np.ones(2))
    with pytest.raises(TypeError, match=r"cotangent 1 has dtype float64, but output 1 \(shape \(2,\)\)"):
        pull_jit((np.ones(2), np.ones(2)))


def test_vjp_integer_output_takes_any_cotangent():
    """JAX's float0 exception: an integer output's cotangent only has to have its shape."""
    _, pull = fg.vjp(lambda x: (x.astype(np.int32), x * 2), np.ones(3))
    for ct in (np.zeros(3, np.float32), np.zeros(3, np.int32)):
        np.testing.assert_array_equal(pull((ct, np.ones(3)))[0], 2 * np.ones(3))


# --- 4. scipy.special real-only functions --------------------------------------------------------
@pytest.mark.parametrize("name,nin", [("expit", 1), ("logit", 1), ("entr", 1), ("kl_div", 2), ("rel_entr", 2)])
def test_real_only_special_rejects_complex(name, nin):
    """Bug: complex input was computed (expit(0.5+0.1j) = 0.62+0.02j); SciPy's ufuncs have
    no complex loop and raise a TypeError: so does funcgrad, eager and traced."""
    z = np.array([0.5 + 0.1j, 0.2 - 0.3j])
    with pytest.raises(TypeError):
        getattr(ss, name)(*[z] * nin)
    for fn in (getattr(fss, name), fg.jit(getattr(fss, name))):
        with pytest.raises(TypeError, match=rf"{name}: complex input is not supported \(got complex128 of shape \(2,\)\)"):
            fn(*[z] * nin)
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(getattr(fss, name)(*[x] * nin), getattr(ss, name)(*[x] * nin), rtol=1e-14)


def test_nn_sigmoid_still_takes_complex():
    """jax.nn.sigmoid (lax.logistic) is defined on complex; only SciPy's expit is not."""
    z = np.array([0.5 + 0.1j, -3 + 2j])
    np.testing.assert_allclose(fnn.sigmoid(z), 1 / (1 + np.exp(-z)), rtol=1e-14)
    np.testing.assert_allclose(fg.jit(fnn.sigmoid)(z), 1 / (1 + np.exp(-z)), rtol=1e-14)
