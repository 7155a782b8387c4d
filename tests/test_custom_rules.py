"""custom_jvp, custom_vjp and checkpoint: the rule actually used, at any order."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads

X = np.array([0.3, -1.0, 2.0])


def _sigmoid(x):
    return 1.0 / (1.0 + fnp.exp(-x))


@fg.custom_jvp
def softplus_x10(x):
    return fnp.log1p(fnp.exp(x))


@softplus_x10.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # Deliberately 10x the true derivative, so tests can tell the rule was used.
    return softplus_x10(x), t * _sigmoid(x) * 10.0


def test_custom_jvp_value_and_rule_used_in_both_modes():
    np.testing.assert_allclose(softplus_x10(X), np.log1p(np.exp(X)), rtol=1e-15)
    want = 10.0 / (1.0 + np.exp(-X))
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(softplus_x10(x)))(X), want, rtol=1e-14)
    np.testing.assert_allclose(fg.jvp(softplus_x10, (X,), (np.ones(3),))[1], want, rtol=1e-14)


def test_custom_jvp_second_order_differentiates_the_rule():
    h = fg.grad(fg.grad(lambda x: softplus_x10(x)))(0.3)
    s = 1 / (1 + np.exp(-0.3))
    assert h == pytest.approx(10.0 * s * (1 - s), rel=1e-13)


def test_custom_jvp_defjvps_and_pytrees():
    @fg.custom_jvp
    def f(x, y):
        return {"p": x * y}

    f.defjvps(lambda g, ans, x, y: {"p": g * y * 2.0}, lambda g, ans, x, y: {"p": x * g})
    gx, gy = fg.grad(lambda x, y: f(x, y)["p"], argnums=(0, 1))(3.0, 4.0)
    assert gx == 8.0 and gy == 3.0


def test_custom_jvp_staged_and_typechecked():
    closed = fg.make_jaxpr(softplus_x10)(X)
    fg.check_jaxpr(closed)
    text = str(closed)
    assert "custom_jvp_call" in text and "log1p" in text and "0x" not in text
    (out,) = fg.eval_closed_jaxpr(closed, X)
    np.testing.assert_allclose(out, np.log1p(np.exp(X)))
    g = fg.grad(lambda x: fnp.sum(fg.eval_closed_jaxpr(closed, x)[0]))(X)
    np.testing.assert_allclose(g, 10.0 / (1.0 + np.exp(-X)), rtol=1e-14)


@fg.custom_vjp
def sin_clipped_grad(x):
    return fnp.sin(x)


def _fwd(x):
    return fnp.sin(x), (fnp.cos(x),)


def _bwd(res, g):
    (c,) = res
    return (fnp.clip(g * c, -0.5, 0.5),)


sin_clipped_grad.defvjp(_fwd, _bwd)


def test_custom_vjp_bwd_used_in_reverse_mode():
    g = fg.grad(lambda x: fnp.sum(sin_clipped_grad(x) * 3.0))(X)
    np.testing.assert_allclose(g, np.clip(3.0 * np.cos(X), -0.5, 0.5))


def test_custom_vjp_forward_mode_differentiates_primal_definition():
    # Beyond JAX: jvp / jacfwd / hessian through a custom_vjp function work.
    _, t = fg.jvp(sin_clipped_grad, (X,), (np.ones(3),))
    np.testing.assert_allclose(t, np.cos(X), rtol=1e-15)
    np.testing.assert_allclose(fg.jacfwd(sin_clipped_grad)(X), np.diag(np.cos(X)), rtol=1e-15)
    check_grads(sin_clipped_grad, (X,), order=2, modes=("fwd",))


def test_custom_vjp_hessian_forward_over_reverse():
    @fg.custom_vjp
    def cube(x):
        return x**3

    cube.defvjp(lambda x: (x**3, x), lambda x, g: (3.0 * x * x * g,))
    H = fg.hessian(lambda x: fnp.sum(cube(x)))(X)
    np.testing.assert_allclose(H, np.diag(6.0 * X), rtol=1e-14)


def test_custom_vjp_bad_bwd_output():
    @fg.custom_vjp
    def f(x):
        return x * 2.0

    f.defvjp(lambda x: (x * 2.0, None), lambda res, g: g * 2.0)
    with pytest.raises(TypeError, match="must return a tuple"):
        fg.grad(f)(1.0)


def test_missing_rules_raise():
    @fg.custom_jvp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="defjvp"):
        f(1.0)


def block(x):
    return fnp.sin(fnp.sin(x)) * 2.0


def test_checkpoint_gradient_equals_plain_gradient():
    g1 = fg.grad(lambda x: fnp.sum(fg.checkpoint(block)(x)))(X)
    g2 = fg.grad(lambda x: fnp.sum(block(x)))(X)
    np.testing.assert_allclose(g1, g2, rtol=1e-15)
    check_grads(fg.checkpoint(block), (X,), order=2)


def test_checkpoint_recomputes_in_backward_pass():
    text = str(fg.make_jaxpr(fg.grad(lambda x: fnp.sum(fg.checkpoint(block)(x))))(X))
    body, backward = text.split("reduce_sum", 1)
    assert "checkpoint_call" in body
    # The backward pass recomputes sin(sin(x)) instead of reading stored intermediates.
    assert backward.count("sin") >= 2


def test_checkpoint_saves_only_inputs_as_residuals():
    from funcgrad.transforms.linearize import linearize_flat

    _, lin = linearize_flat(lambda x: [fnp.sum(fg.checkpoint(block)(x))], [X])
    resid = [c for c in lin.consts if np.ndim(c) > 0]
    assert len(resid) == 1 and resid[0] is X


# --- closures: constants are fine, traced values are refused with a clear error --------------

def _closing_over(kind, c):
    if kind == "custom_jvp":
        @fg.custom_jvp
        def f(y):
            return fnp.sin(y) * c

        f.defjvp(lambda p, t: (f(p[0]), t[0] * fnp.cos(p[0]) * c))
    else:
        @fg.custom_vjp
        def f(y):
            return fnp.sin(y) * c

        f.defvjp(lambda y: (f(y), y), lambda y, g: (g * fnp.cos(y) * c,))
    return f


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
def test_closure_over_a_constant_works_everywhere(kind):
    f = _closing_over(kind, np.float64(3.0))
    x = np.array([0.2, 0.9])
    expected = 3.0 * np.cos(x)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(f(x)))(x), expected, rtol=1e-14)
    np.testing.assert_allclose(fg.jit(fg.grad(lambda x: fnp.sum(f(x))))(x), expected, rtol=1e-14)
    np.testing.assert_allclose(fg.vmap(fg.grad(lambda v: f(v)))(x), expected, rtol=1e-14)


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
def test_closure_over_values_of_an_enclosing_transform(kind):
    """Closing over a value traced by jit / vmap / make_jaxpr / a loop body works (the
    function is closure-converted), and so do derivatives taken inside that transform."""
    from funcgrad import lax

    h = lambda x, c: _closing_over(kind, c)(x)  # noqa: E731
    x, c, xs = np.array([0.3, 0.7]), np.array([2.0, 3.0]), np.arange(3.0)
    np.testing.assert_allclose(fg.jit(h)(x, c), np.sin(x) * c, rtol=1e-14)
    np.testing.assert_allclose(fg.vmap(h)(x, c), np.sin(x) * c, rtol=1e-14)
    closed = fg.make_jaxpr(h)(x, c)
    np.testing.assert_allclose(fg.eval_closed_jaxpr(closed, x, c)[0], np.sin(x) * c, rtol=1e-14)
    ys = lax.scan(lambda cc, v: (cc + 1.0, _closing_over(kind, cc)(v)), 1.0, xs)[1]
    np.testing.assert_allclose(ys, np.sin(xs) * np.arange(1.0, 4.0), rtol=1e-14)
    g = fg.grad(lambda x, c: fnp.sum(h(x, c)))
    np.testing.assert_allclose(fg.jit(g)(x, c), np.cos(x) * c, rtol=1e-14)
    np.testing.assert_allclose(fg.vmap(fg.grad(h))(x, c), np.cos(x) * c, rtol=1e-14)


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
@pytest.mark.parametrize("where", ["grad", "grad_of_jit", "grad_of_scan"])
def test_closures_that_cannot_work_raise_clearly(kind, where):
    """Closing over the value being differentiated, or differentiating from outside a
    jit / loop whose values the rule closes over: a clear UnexpectedTracerError."""
    from funcgrad import lax

    h = lambda x, c: _closing_over(kind, c)(x)  # noqa: E731
    x, c = np.array([0.3, 0.7]), np.array([2.0, 3.0])
    runs = {
        "grad": (lambda: fg.grad(lambda x: fnp.sum(h(x * 2.0, x)))(x), "closes over a value that is being differentiated"),
        "grad_of_jit": (lambda: fg.grad(lambda x: fnp.sum(fg.jit(h)(x, c)))(x), "transform that has finished"),
        "grad_of_scan": (lambda: fg.grad(lambda xs: fnp.sum(
            lax.scan(lambda cc, v: (cc + 1.0, _closing_over(kind, cc)(v)), 1.0, xs)[1]))(x), "transform that has finished"),
    }
    run, message = runs[where]
    with pytest.raises(fg.errors.UnexpectedTracerError, match=message):
        run()


def test_custom_vjp_bwd_may_return_none_for_a_zero_cotangent():
    # JAX documents None in bwd's output as a zero cotangent for that argument.
    @fg.custom_vjp
    def g(x, y):
        return x * fnp.sum(y)

    g.defvjp(lambda x, y: (g(x, y), (x, y)), lambda res, ct: (ct * fnp.sum(res[1]), None))
    y = np.array([1.0, 2.0])
    for grad in (fg.grad(g, argnums=(0, 1)), fg.jit(fg.grad(g, argnums=(0, 1)))):
        gx, gy = grad(2.0, y)
        np.testing.assert_allclose(gx, 3.0)
        np.testing.assert_array_equal(gy, np.zeros(2))


def test_python_if_on_primals_inside_custom_rules_under_eager_grad():
    # JAX allows it: under an eager grad/jvp the primal values are concrete.
    @fg.custom_jvp
    def f(x):
        if x > 0:
            return fnp.sin(x)
        return x

    @f.defjvp
    def f_jvp(p, t):
        (x,), (dx,) = p, t
        return f(x), (fnp.cos(x) * dx if x > 0 else dx)

    np.testing.assert_allclose(fg.grad(f)(0.5), np.cos(0.5))
    assert fg.grad(f)(-0.5) == 1.0
    np.testing.assert_allclose(fg.jvp(f, (0.5,), (1.0,))[1], np.cos(0.5))

    @fg.custom_vjp
    def h(x):
        if x > 0:
            return x * 2.0
        return x

    h.defvjp(lambda x: (h(x), x), lambda x, ct: (ct * (2.0 if x > 0 else 1.0),))
    assert fg.grad(h)(0.5) == 2.0 and fg.grad(h)(-0.5) == 1.0
    # Staged, the same code still says to use lax.cond: its primal is not known there.
    with pytest.raises(fg.errors.TracerBoolConversionError):
        fg.jit(fg.grad(h))(0.5)
