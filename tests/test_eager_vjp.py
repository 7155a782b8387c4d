"""The eager reverse mode (transforms/eager_vjp.py) against the general one.

``grad`` with no outer transform records on the eager tape; with
``eager_vjp.ENABLED = False`` it takes the general path (JVP + linear tape + transpose),
which the op table checks against finite differences. Every op-table row is run through
both and the gradients must agree in shape, dtype and value.
"""
import re
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.primitive import ALLOWED_MISSING, NO_EAGER_RECORD, eager_vjp_rules, impl_rules
from funcgrad.core.prims import linalg_eager
from funcgrad.core.pytree import tree_flatten
from funcgrad.transforms import eager_vjp

from harness import grad_argnums, mlp_loss
from op_rows import all_rows

ROWS = all_rows()


general_path = eager_vjp.disabled  # grad on the general reverse mode


def both(f, *args, argnums=0, has_aux=False):
    """grad on the eager tape and on the general path (asserting the former is used)."""
    assert eager_vjp.usable()
    fast = fg.value_and_grad(f, argnums=argnums, has_aux=has_aux)(*args)
    with general_path():
        slow = fg.value_and_grad(f, argnums=argnums, has_aux=has_aux)(*args)
    return fast, slow


def assert_trees_close(a, b, rtol=1e-12, atol=1e-14):
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, x.dtype, y.shape, y.dtype)
        tol = rtol if x.dtype == np.float64 else 1e-5
        np.testing.assert_allclose(x, y, rtol=tol, atol=atol if x.dtype == np.float64 else 1e-6, equal_nan=True)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_row_gradient_matches_general_path(row):
    """A random projection of the row's float outputs, differentiated both ways. Rows
    kept from finite differences (kinks, ties, NaNs, infinities) are included: there the
    two paths must still agree on the conventions."""
    argnums = grad_argnums(row)
    if not argnums:
        pytest.skip("no floating-point arguments")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        outs = tree_flatten(row.fun(*row.args))[0]
        rng = np.random.default_rng(sum(map(ord, row.name)))
        weights = [rng.normal(size=np.shape(o)).astype(np.asarray(o).dtype) if np.asarray(o).dtype.kind in "fc"
                   else None for o in outs]
        if all(w is None for w in weights):
            pytest.skip("no floating-point outputs")

        def loss(*args):
            total = 0.0
            for o, w in zip(tree_flatten(row.fun(*args))[0], weights):
                if w is not None:
                    total = total + fnp.real(fnp.sum(o * w))  # (complex outputs: a real loss)
            return fnp.asarray(total, np.float64)

        with general_path():
            try:
                slow = fg.value_and_grad(loss, argnums=argnums)(*row.args)
            except Exception as e:  # e.g. a derivative that does not exist: same error
                with pytest.raises(type(e), match=re.escape(str(e))):
                    fg.value_and_grad(loss, argnums=argnums)(*row.args)
                return
        fast = fg.value_and_grad(loss, argnums=argnums)(*row.args)
    assert_trees_close(fast, slow)


def test_every_eager_rule_is_exercised_by_the_op_table():
    """Every eager cotangent rule (hand-written in a registration block, or derived there)
    meets the comparison above through at least one op-table row."""
    seen = set()
    rules = [p for p, rule in eager_vjp_rules.items() if rule is not NO_EAGER_RECORD]
    # Eager-only primitives (NumPy's LAPACK on concrete values) never reach a jaxpr: the
    # rows must bind them eagerly.
    eager_only = [p for p in rules if ALLOWED_MISSING["lower"].get(p.name) == linalg_eager._EAGER_ONLY]
    saved = {p: impl_rules[p] for p in eager_only}

    def spy(p):
        def impl(*args, **params):
            seen.add(p)
            return saved[p](*args, **params)
        return impl

    impl_rules.update({p: spy(p) for p in eager_only})
    try:
        for row in ROWS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                seen |= {e.primitive for e in fg.make_jaxpr(row.fun)(*row.args).jaxpr.eqns}
                try:
                    row.fun(*row.args)
                except Exception:  # (a row checking an error)
                    pass
    finally:
        impl_rules.update(saved)
    missing = sorted(p.name for p in rules if p not in seen)
    assert not missing, f"eager vjp rules with no op-table row: {missing}"


# --- the mechanism ------------------------------------------------------------------------------

def test_mlp_matches_general_path_and_by_hand():
    rng = np.random.default_rng(0)
    params = (rng.normal(size=(6, 5)), rng.normal(size=5), rng.normal(size=(5, 3)), rng.normal(size=3))
    x, y = rng.normal(size=(4, 6)), np.eye(3)[[0, 2, 1, 0]]
    fast, slow = both(mlp_loss, params, x, y)
    assert_trees_close(fast, slow)
    w1, b1, w2, b2 = params
    a = x @ w1 + b1
    h = np.tanh(a)
    logits = h @ w2 + b2
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    d = (p - y) / 4
    da = (d @ w2.T) * (1 - h * h)
    expected = (x.T @ da, da.sum(0), h.T @ d, d.sum(0))
    assert_trees_close(fast[1], expected, rtol=1e-10)


def test_python_control_flow_on_values():
    def f(x):
        if x > 0:
            return x * fnp.sin(x)
        return -x

    assert fg.grad(f)(1.3) == pytest.approx(np.sin(1.3) + 1.3 * np.cos(1.3))
    assert fg.grad(f)(-1.0) == -1.0


def test_nested_grad_and_perturbation_confusion():
    assert fg.grad(lambda x: x * fg.grad(lambda y: x * y)(1.0))(2.0) == 4.0
    f = lambda x: fnp.sin(x) * x ** 3  # noqa: E731
    fast = fg.grad(fg.grad(f))(0.7)
    with general_path():
        slow = fg.grad(fg.grad(f))(0.7)
    assert fast == pytest.approx(slow, rel=1e-13)
    assert fast == pytest.approx(-np.sin(0.7) * 0.7**3 + 6 * np.cos(0.7) * 0.7**2 + 6 * 0.7 * np.sin(0.7), rel=1e-12)


def test_inner_transforms_inside_eager_grad():
    def f(x):
        _, t = fg.jvp(fnp.sin, (x,), (fnp.ones_like(x),))
        v = fg.vmap(lambda r: fnp.sum(r * r))(x.reshape(2, 2))
        return fnp.sum(t * x) + fnp.sum(v) + fnp.sum(fg.jit(fnp.tanh)(x))

    x = np.array([0.1, 0.5, -0.3, 1.2])
    fast, slow = both(f, x)
    assert_trees_close(fast, slow)


@pytest.mark.parametrize("name", ["cond", "switch", "while", "scan", "fori", "custom_jvp", "custom_vjp", "checkpoint", "jit", "linalg", "sort"])
def test_primitives_without_eager_rules_use_the_general_path(name):
    @fg.custom_jvp
    def softplus(x):
        return fnp.log1p(fnp.exp(x))

    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * (1 / (1 + fnp.exp(-p[0])))))

    @fg.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (x ** 3, x), lambda x, g: (3 * x * x * g,))
    bodies = {
        "cond": lambda x: lax.cond(x[0] > 0, lambda v: fnp.sin(v) * 2, lambda v: v, x),
        "switch": lambda x: lax.switch(1, [fnp.sin, fnp.cos], x),
        "while": lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * fnp.cos(c[1])), (0, x))[1],
        "scan": lambda x: lax.scan(lambda c, v: (c * v + 1, c), 1.0, x)[0],
        "fori": lambda x: lax.fori_loop(0, 3, lambda i, v: v * fnp.tanh(v), x),
        "custom_jvp": softplus,
        "custom_vjp": cube,
        "checkpoint": fg.checkpoint(lambda x: fnp.sin(fnp.sin(x))),
        "jit": fg.jit(lambda x: fnp.exp(x) * x),
        "linalg": lambda x: fnp.linalg.solve(fnp.outer(x, x) + 3 * fnp.eye(3), x),
        "sort": lambda x: fnp.sort(x) * fnp.arange(3.0),
    }
    body = bodies[name]
    f = lambda x: fnp.sum(body(x) ** 2)  # noqa: E731
    x = np.array([0.3, -0.7, 1.1])
    fast, slow = both(f, x)
    assert_trees_close(fast, slow)


def test_pytrees_argnums_has_aux_and_integer_arguments():
    def f(p, n, z):
        return fnp.sum(p["a"] * n) + p["b"][0] * z, {"n": n, "twice": 2 * p["b"][1]}

    p = {"a": np.arange(3.0), "b": (1.5, np.float32(2.0))}
    fast, slow = both(f, p, np.array([1, 2, 3]), 0.5, argnums=(0, 2), has_aux=True)
    assert_trees_close(fast, slow)
    assert np.asarray(fast[1][0]["b"][1]).dtype == np.float32


def test_unused_constant_and_identity_outputs():
    fast, slow = both(lambda x, y: fnp.sum(y), np.ones(3), np.ones(2))
    assert_trees_close(fast, slow)
    np.testing.assert_array_equal(fast[1], np.zeros(3))
    assert fg.grad(lambda x: x)(3.0) == 1.0
    assert fg.grad(lambda x: x * x + x)(3.0) == 7.0  # one value used three times


def test_float32_gradients_stay_float32():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    f = lambda x: fnp.sum(fnp.tanh(x) * fnp.exp(x) / (1 + x * x) + fnp.maximum(x, 0.25) ** 3)  # noqa: E731
    fast, slow = both(f, x)
    assert fast[1].dtype == np.float32
    assert_trees_close(fast, slow)


def test_errors_match_the_general_path():
    with pytest.raises(TypeError, match="real scalar output"):
        fg.grad(lambda x: x * 2)(np.ones(3))
    with pytest.raises(TypeError, match="real-valued"):
        fg.grad(lambda n: n * 2)(3)
    with pytest.raises(ValueError, match="dot_general: lhs f64.2,3. dimension 1"):
        fg.grad(lambda x: fnp.sum(lax.dot_general(x, np.ones((4, 2)), (((1,), (0,)), ((), ())))))(np.ones((2, 3)))
    with pytest.raises(ValueError, match="matmul: shapes"):
        fg.grad(lambda x: fnp.sum(x @ np.ones((4, 2))))(np.ones((2, 3)))
    leaked = []
    fg.grad(lambda x: leaked.append(x) or x * 1.0)(1.0)
    with pytest.raises(fg.errors.UnexpectedTracerError):
        fnp.sin(leaked[0])


def test_grad_under_outer_transforms_takes_the_general_path():
    f = lambda x: fnp.sum(fnp.sin(x) ** 2)  # noqa: E731
    xs = np.linspace(0.1, 1.0, 6).reshape(2, 3)
    np.testing.assert_allclose(fg.vmap(fg.grad(f))(xs), np.stack([fg.grad(f)(r) for r in xs]), rtol=1e-14)
    np.testing.assert_allclose(fg.jit(fg.grad(f))(xs[0]), fg.grad(f)(xs[0]), rtol=1e-14)
    np.testing.assert_allclose(fg.hessian(f)(xs[0]), fg.jacfwd(fg.grad(f))(xs[0]), rtol=1e-13)
