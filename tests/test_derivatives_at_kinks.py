"""Derivative conventions at kinks and discontinuities (documented choices).

- |x| at 0: 0 (the subgradient is sign(0) = 0, like JAX).
- maximum/minimum at ties: the tangent is shared equally (0.5 each).
- max/min reductions with several maximal entries: averaged over them.
- sign, floor, ceil, round, trunc, comparisons: derivative 0 everywhere (also at jumps).
- clip at a bound: the bound is attained through maximum/minimum, so 0.5.
- sqrt at 0: +inf (the one-sided limit), like NumPy's value semantics.
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
