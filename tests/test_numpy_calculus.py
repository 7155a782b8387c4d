"""funcgrad.numpy calculus, polynomial, index-trick, window and pad behaviour the op
table cannot express: concrete-only functions, NumPy-only keywords, typed errors."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors


def test_polydiv_trim_leading_zeros_matches_numpy_and_is_concrete_only():
    u, v = np.array([3.0, 5.0, 2.0, 1.0]), np.array([2.0, 1.0])
    q, r = fnp.polydiv(u, v, trim_leading_zeros=True)
    q_np, r_np = np.polydiv(u, v)
    np.testing.assert_allclose(q, q_np, rtol=1e-14)
    np.testing.assert_allclose(r, r_np, rtol=1e-14)
    with pytest.raises(errors.DataDependentShapeError, match="polydiv.*trim_leading_zeros"):
        fg.jit(lambda u: fnp.polydiv(u, v, trim_leading_zeros=True))(u)


def test_polymul_trim_leading_zeros():
    a, b = np.array([0.0, 0.0, 1.0, 2.0]), np.array([0.0, 3.0])
    np.testing.assert_array_equal(fnp.polymul(a, b, trim_leading_zeros=True), np.array([3.0, 6.0]))
    # default (JAX): no trimming, so the shape is static; NumPy's polymul trims
    np.testing.assert_array_equal(fnp.polymul(a, b), np.convolve(a, b))


@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [0, 1, -6, 11, -6, 0, 0], [2.0, -4.0], [5.0]])
def test_roots_real_matches_numpy(p):
    got, want = fnp.roots(np.asarray(p)), np.roots(p)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.sort(got), np.sort(want), rtol=1e-12, atol=1e-12)


def test_roots_traced_with_strip_zeros_raises_a_typed_error():
    with pytest.raises(errors.DataDependentShapeError, match="roots.*strip_zeros=False"):
        fg.jit(fnp.roots)(np.array([1.0, -3.0, 2.0]))


def test_pad_callable_numpy_style_in_place():
    def fill(vector, pad_width, iaxis, kwargs):
        vector[:pad_width[0]] = kwargs.get("padder", 10)
        if pad_width[1]:
            vector[-pad_width[1]:] = kwargs.get("padder", 10)

    a = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(fnp.pad(a, 2, fill), np.pad(a, 2, fill))
    np.testing.assert_array_equal(fnp.pad(a, (1, 2), fill, padder=100), np.pad(a, (1, 2), fill, padder=100))


def test_pad_callable_returning_the_vector_is_traceable():
    def ends(vector, pad_width, iaxis, kwargs):
        n = vector.shape[0]
        idx = np.arange(n)
        return fnp.where((idx >= pad_width[0]) & (idx < n - pad_width[1]), vector, -1.0 - iaxis)

    x = np.arange(6.0).reshape(2, 3)
    want = np.pad(x, (1, 2), constant_values=-1.0)
    want[:, :1] = want[:, -2:] = -2.0  # axis 1 is padded last, so it owns the corners
    np.testing.assert_array_equal(fnp.pad(x, (1, 2), ends), want)
    np.testing.assert_array_equal(fg.jit(lambda x: fnp.pad(x, (1, 2), ends))(x), want)
    np.testing.assert_array_equal(fg.grad(lambda x: fnp.sum(fnp.pad(x, (1, 2), ends)))(x), np.ones_like(x))


def test_pad_grad_of_reflect_counts_every_copy():
    # d/dx sum(pad(x, reflect)): each element's weight is how often it appears.
    x = np.array([1.0, 2.0, 3.0])
    g = fg.grad(lambda x: fnp.sum(fnp.pad(x, (4, 3), mode="reflect")))(x)
    counts = np.pad(np.eye(3), ((0, 0), (4, 3)), mode="reflect").sum(1)
    np.testing.assert_array_equal(g, counts)


def test_mask_indices_with_a_funcgrad_mask_function_eagerly():
    for a, b in zip(fnp.mask_indices(3, fnp.triu, 1), np.mask_indices(3, np.triu, 1)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(errors.DataDependentShapeError, match="mask_indices"):
        fg.make_jaxpr(lambda x: fnp.mask_indices(3, fnp.triu) and x)(1.0)


def test_s_and_index_exp():
    assert fnp.s_[1:2, ::3] == np.s_[1:2, ::3]
    assert fnp.index_exp[2] == (2,)
    assert fnp.s_[2] == 2


def test_i0_derivative_is_i1():
    import scipy.special as sp

    x = np.array([-3.0, -0.5, 0.0, 1.5, 35.0])
    g = fg.vmap(fg.grad(fnp.i0))(x)
    np.testing.assert_allclose(g, sp.i1(x), rtol=1e-12)


def test_gradient_traced_coordinates_match_eager():
    f, x = np.array([1.0, 2.0, 4.0, 7.0, 11.0]), np.array([0.0, 1.0, 1.5, 3.5, 4.0])
    np.testing.assert_allclose(fg.jit(lambda f, x: fnp.gradient(f, x, edge_order=2))(f, x),
                               np.gradient(f, x, edge_order=2), rtol=1e-14)


@pytest.mark.parametrize("call, match", [
    (lambda: fnp.diff(np.float64(1.0)), r"diff.*at least one dimensional.*\(\)"),
    (lambda: fnp.diff(np.ones(3), n=-1), "diff: order must be non-negative"),
    (lambda: fnp.gradient(np.ones(2), edge_order=2), r"gradient.*edge_order \+ 1.*\(2,\)"),
    (lambda: fnp.gradient(np.ones(3), np.ones(4)), "gradient.*length"),
    (lambda: fnp.gradient(np.ones(3), edge_order=3), "gradient: 'edge_order'"),
    (lambda: fnp.trapezoid(np.ones(3), x=np.ones(4)), r"trapezoid.*\(4,\).*\(3,\)"),
    (lambda: fnp.cumulative_sum(np.ones((2, 2))), r"cumulative_sum.*axis.*\(2, 2\)"),
    (lambda: fnp.interp(1.0, np.ones(3), np.ones(2)), "interp: fp and xp"),
    (lambda: fnp.interp(1.0, np.ones((2, 2)), np.ones((2, 2))), r"interp.*one-dimensional.*\(2, 2\)"),
    (lambda: fnp.interp(1.0, [1.0], [1.0], period=0), "interp: period"),
    (lambda: fnp.convolve(np.ones((2, 2)), np.ones(2)), r"convolve.*1-d.*\(2, 2\)"),
    (lambda: fnp.correlate(np.ones(0), np.ones(2)), r"correlate.*empty"),
    (lambda: fnp.convolve(np.ones(3), np.ones(2), mode="bad"), "convolve: mode"),
    (lambda: fnp.polyval(np.ones((2, 2)), 1.0), r"polyval.*1-d.*\(2, 2\)"),
    (lambda: fnp.polyfit(np.ones(3), np.ones(4), 1), r"polyfit.*x \(3,\).*y \(4,\)"),
    (lambda: fnp.polyfit(np.ones(3), np.ones(3), -1), "polyfit: expected deg >= 0"),
    (lambda: fnp.poly(np.ones((2, 3))), r"poly: input must be 1d.*\(2, 3\)"),
    (lambda: fnp.polyder(np.ones(3), -1), "polyder: order"),
    (lambda: fnp.polyint(np.ones(3), 2, k=[1.0]), "polyint: k"),
    (lambda: fnp.vander(np.ones((2, 2))), r"vander.*\(2, 2\)"),
    (lambda: fnp.r_["0", 1, "1"], "r_: special directives must be the first"),
    (lambda: fnp.r_["x,y", 1], "r_: unknown special directive"),
    (lambda: fnp.ix_(np.ones((2, 2))), r"ix_.*1 dimensional.*\(2, 2\)"),
    (lambda: fnp.tril_indices_from(np.ones(3)), r"tril_indices_from.*2-d.*\(3,\)"),
    (lambda: fnp.diag_indices_from(np.ones((2, 3))), r"diag_indices_from.*equal length.*\(2, 3\)"),
    (lambda: fnp.geomspace(0.0, 1.0), "geomspace.*zero"),
    (lambda: fnp.block([]), "block: list at arrays cannot be empty"),
    (lambda: fnp.block([[1], 2]), r"block: list depths are mismatched"),
    (lambda: fnp.block((1, 2)), "block: arrays is a tuple"),
    (lambda: fnp.kaiser(3, np.ones(2)), r"kaiser: beta must be a scalar.*\(2,\)"),
    (lambda: fnp.pad(np.ones(3), 1, mode="nope"), "pad: mode 'nope'"),
    (lambda: fnp.pad(np.ones(3), 1, mode="edge", constant_values=1), "pad: unsupported keyword.*edge"),
    (lambda: fnp.pad(np.ones((0, 2)), 1, mode="wrap"), r"pad: can't extend empty axis 0 of shape \(0, 2\)"),
    (lambda: fnp.pad(np.ones(3), 1, mode="reflect", reflect_type="x"), "pad: reflect_type"),
    (lambda: fnp.pad(np.ones(3), 1, mode="mean", stat_length=0), "pad: stat_length of 0"),
])
def test_bad_arguments_raise_typed_errors_naming_the_function(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


def test_static_arguments_must_be_concrete():
    with pytest.raises(errors.ConcretizationError, match="diff: n"):
        fg.jit(lambda n: fnp.diff(np.ones(4), n))(1)
    with pytest.raises(errors.ConcretizationError, match="bartlett: M"):
        fg.jit(fnp.bartlett)(3)
    with pytest.raises(errors.DataDependentShapeError, match="ix_"):
        fg.jit(lambda b: fnp.ix_(b))(np.array([True, False]))
