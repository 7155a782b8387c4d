"""Derivative conventions at kinks and discontinuities (documented choices).

- |x| at 0: 0 (the subgradient is sign(0) = 0, like JAX).
- maximum/minimum at ties: the tangent is shared equally (0.5 each).
- max/min reductions with several maximal entries: averaged over them.
- sign, floor, ceil, round, trunc, comparisons: derivative 0 everywhere (also at jumps).
- clip at a bound: the bound is attained through maximum/minimum, so 0.5.
- sqrt at 0: +inf (the one-sided limit), like NumPy's value semantics.
- arctan2 with one argument infinite and the other finite: 0 in both (it is constant
  there; the formula's inf/inf would be NaN, and 0 * NaN where a cotangent is a computed 0).
"""
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp


def test_abs_at_zero_is_zero():
    assert fg.grad(fnp.abs)(0.0) == 0.0
    assert fg.grad(fnp.abs)(-2.0) == -1.0


def test_maximum_minimum_ties_share_equally():
    gx, gy = fg.grad(lambda x, y: fnp.maximum(x, y), argnums=(0, 1))(1.0, 1.0)
    assert gx == 0.5 and gy == 0.5
    assert fg.grad(lambda x: fnp.maximum(x, 0.0))(0.0) == 0.5  # relu at 0
    gx, gy = fg.grad(lambda x, y: fnp.minimum(x, y), argnums=(0, 1))(2.0, 2.0)
    assert gx == 0.5 and gy == 0.5


def test_max_reduction_ties_average():
    g = fg.grad(lambda x: fnp.max(x))(np.array([1.0, 3.0, 3.0, 0.0]))
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5, 0.0])


def test_piecewise_constant_functions_have_zero_derivative():
    for f in (fnp.sign, fnp.floor, fnp.ceil, fnp.round, fnp.trunc, fnp.rint):
        assert fg.grad(lambda x: f(x) * 1.0)(0.0) == 0.0
        assert fg.grad(lambda x: f(x) * 1.0)(1.5) == 0.0


def test_clip_at_bounds():
    g = fg.grad(lambda x: fnp.sum(fnp.clip(x, -1.0, 1.0)))(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 0.5, 1.0, 0.5, 0.0])


@__import__("pytest").mark.filterwarnings("ignore:divide by zero")
def test_sqrt_at_zero_is_inf():
    assert fg.grad(fnp.sqrt)(0.0) == np.inf


def test_arctan2_at_an_infinite_argument_is_zero():
    d = fg.grad(fnp.arctan2, argnums=(0, 1))
    for a, b in [(np.inf, 2.0), (-np.inf, -3.0), (2.0, np.inf), (3.0, -np.inf)]:
        for f in (d, fg.jit(d)):
            assert [float(v) for v in f(a, b)] == [0.0, 0.0]
    assert np.isnan(d(np.inf, np.inf)).all()
    np.testing.assert_allclose(fg.hessian(fnp.arctan2)(1.0, 0.0), 0.0)  # (finite points unchanged)
    np.testing.assert_allclose(d(1.0, 2.0), (2.0 / 5, -1.0 / 5))


def test_arctan2_at_infinity_before_a_piecewise_constant_loop_jit_grad_is_grad():
    """The cotangent that reaches arctan2 is 0 computed in the compiled loop's transpose
    and symbolic eagerly: both give 0 since the partial there is 0, not inf/inf."""
    from funcgrad import lax

    x1 = np.array([np.inf], np.float32)

    def loss(x0):
        v2 = fnp.arctan2(x1, fnp.abs(x0) + 1.0)
        body = lambda c: (c[0] + 1, (c[1] ** 3 >= 1.5).astype(np.float64))  # noqa: E731
        v3 = lax.while_loop(lambda c: (c[0] < 3) & (fnp.sum(c[1]) < 5.2), body, (0, v2))[1]
        return fnp.sum(v3 * np.cos(np.arange(3.0)))

    x0 = np.array([[-1.572, -0.253, 0.149]])
    np.testing.assert_array_equal(fg.jit(fg.grad(loss))(x0), fg.grad(loss)(x0))
    np.testing.assert_array_equal(fg.grad(loss)(x0), np.zeros((1, 3)))
