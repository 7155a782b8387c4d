"""vmap: in_axes/out_axes/axis_size, pytrees, nesting, errors, compositions."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors
from funcgrad.test_util import check_grads

rng = np.random.default_rng(0)
X = rng.normal(size=(5, 3))
Y = rng.normal(size=3)


def loop(f, *args, axes):
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = [f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes)]) for i in range(n)]
    return np.stack(outs)


def test_in_axes_int_none_negative():
    f = lambda x, y: fnp.sin(x) * y  # noqa: E731
    np.testing.assert_allclose(fg.vmap(f, (0, None))(X, Y), loop(f, X, Y, axes=(0, None)), rtol=1e-15)
    np.testing.assert_allclose(fg.vmap(f, (-1, None))(X.T, Y), loop(f, X, Y, axes=(0, None)), rtol=1e-15)
    np.testing.assert_allclose(fg.vmap(f, 1)(X.T, X.T), loop(f, X, X, axes=(0, 0)), rtol=1e-15)


def test_out_axes_and_unbatched_outputs():
    f = lambda x: (x * 2.0, fnp.sum(Y))  # noqa: E731
    a, b = fg.vmap(f, out_axes=(1, 0))(X)
    np.testing.assert_allclose(a, (X * 2.0).T)
    np.testing.assert_allclose(b, np.full(5, Y.sum()))
    c, d = fg.vmap(f, out_axes=(0, None))(X)
    assert np.shape(d) == ()


def test_axis_size_required_and_checked():
    with pytest.raises(ValueError, match="axis_size"):
        fg.vmap(lambda x: x, in_axes=None)(Y)
    out = fg.vmap(lambda x: x * 2.0, in_axes=None, axis_size=4)(Y)
    assert out.shape == (4, 3)
    with pytest.raises(ValueError, match="axis_size=4"):
        fg.vmap(lambda x: x, axis_size=4)(X)


def test_pytree_inputs_outputs_and_prefix_axes():
    def f(p, x):
        return {"y": p["w"] @ x + p["b"], "n": fnp.sum(x * x)}

    params = {"w": rng.normal(size=(2, 3)), "b": rng.normal(size=2)}
    out = fg.vmap(f, in_axes=({"w": None, "b": None}, 0))(params, X)
    ref = [f(params, x) for x in X]
    np.testing.assert_allclose(out["y"], np.stack([r["y"] for r in ref]), rtol=1e-14)
    out2 = fg.vmap(f, in_axes=(None, 0))(params, X)
    np.testing.assert_allclose(out2["n"], np.stack([r["n"] for r in ref]), rtol=1e-14)


def test_nested_vmap_is_outer_product():
    f = fg.vmap(fg.vmap(lambda a, b: a * b, (None, 0)), (0, None))
    np.testing.assert_allclose(f(np.arange(4.0), np.arange(3.0)), np.outer(np.arange(4.0), np.arange(3.0)))


def test_inconsistent_sizes_name_each_argument():
    with pytest.raises(ValueError, match=r"argument 0 has size 5 on axis 0; argument 1 has size 3"):
        fg.vmap(lambda a, b: a)(X, Y)


def test_out_of_range_axis_names_argument_and_shape():
    with pytest.raises(ValueError, match=r"in_axes 2 is out of range.*shape \(5, 3\)"):
        fg.vmap(lambda a: a, in_axes=2)(X)


def test_python_if_on_batched_value():
    with pytest.raises(errors.TracerBoolConversionError, match="test_vmap.py"):
        fg.vmap(lambda x: x if x.sum() > 0 else -x)(X)


def test_per_example_gradients_no_loop_in_jaxpr():
    w, y = rng.normal(size=3), rng.normal(size=5)
    loss = lambda w, x, t: (x @ w - t) ** 2  # noqa: E731
    pe = fg.vmap(fg.grad(loss), in_axes=(None, 0, 0))(w, X, y)
    np.testing.assert_allclose(pe, np.stack([2 * (x @ w - t) * x for x, t in zip(X, y)]), rtol=1e-14)
    text = str(fg.make_jaxpr(fg.vmap(fg.grad(loss), in_axes=(None, 0, 0)))(w, X, y))
    assert "dot_general" in text and text.count("\n") < 20


def test_grad_of_vmap_and_check_grads():
    f = lambda w: fnp.sum(fg.vmap(lambda x: fnp.tanh(x @ w))(X))  # noqa: E731
    check_grads(f, (Y,), order=2)
    check_grads(fg.vmap(lambda x: fnp.sin(x) * x), (X,), order=2)


def test_jacobians_use_vmap_and_match():
    A = rng.normal(size=(4, 3))
    f = lambda x: fnp.tanh(A @ x)  # noqa: E731
    J = (1 - np.tanh(A @ Y) ** 2)[:, None] * A
    np.testing.assert_allclose(fg.jacfwd(f)(Y), J, rtol=1e-13)
    np.testing.assert_allclose(fg.jacrev(f)(Y), J, rtol=1e-13)
    text = str(fg.make_jaxpr(fg.jacrev(f))(Y))
    assert text.count("tanh") == 1  # one batched pullback, not one per output


def test_vmap_of_custom_rules():
    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), t[0] * 10.0))
    np.testing.assert_allclose(fg.vmap(f)(X), np.sin(X))
    g = fg.vmap(fg.grad(lambda x: fnp.sum(f(x))))(X)
    np.testing.assert_allclose(g, np.full(X.shape, 10.0))

    @fg.custom_vjp
    def h(x):
        return x * 3.0

    h.defvjp(lambda x: (x * 3.0, None), lambda r, g: (g * 7.0,))
    np.testing.assert_allclose(fg.vmap(fg.grad(lambda x: fnp.sum(h(x))))(X), np.full(X.shape, 7.0))
    np.testing.assert_allclose(fg.vmap(fg.grad(lambda x: fnp.sum(fg.checkpoint(fnp.sin)(x))))(X), np.cos(X), rtol=1e-15)


def test_batched_indices_and_updates():
    idx = rng.integers(0, 3, size=(5, 2))
    np.testing.assert_allclose(fg.vmap(lambda x, i: x[i])(X, idx), np.stack([x[i] for x, i in zip(X, idx)]))
    upd = fg.vmap(lambda x, i, v: x.at[i].add(v))(X, idx, np.ones((5, 2)))
    np.testing.assert_allclose(upd, np.stack([fnp.at(x)[i].add(1.0) for x, i in zip(X, idx)]))
    s = np.array([0, 2, 1, 1, 0])
    np.testing.assert_allclose(fg.vmap(lambda x, i: x[i])(X, s), X[np.arange(5), s])
