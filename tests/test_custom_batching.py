"""``funcgrad.custom_batching``: ``custom_vmap`` runs its rule under ``vmap`` (eager, staged,
compiled, nested in ``grad``), the function itself elsewhere; ``sequential_vmap`` loops."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.custom_batching import custom_vmap, sequential_vmap


def _make():
    calls = []

    @custom_vmap
    def f(x, y):
        return {"s": fnp.sin(x) * y, "y": y}

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        calls.append((axis_size, in_batched))
        out = {"s": fnp.cos(x) * y, "y": y}  # a different function, to see that the rule ran
        return out, {"s": True, "y": in_batched[1]}

    return f, calls


def test_outside_vmap_the_function_runs():
    f, calls = _make()
    out = f(0.5, 2.0)
    assert out["s"] == pytest.approx(np.sin(0.5) * 2.0) and calls == []
    np.testing.assert_allclose(fg.jit(f)(0.5, 2.0)["s"], np.sin(0.5) * 2.0, rtol=1e-15)


def test_under_vmap_the_rule_runs():
    f, calls = _make()
    x = np.arange(3.0)
    out = fg.vmap(f, in_axes=(0, None))(x, 2.0)
    np.testing.assert_allclose(out["s"], np.cos(x) * 2.0, rtol=1e-15)
    assert out["y"].shape == (3,) and calls == [(3, [True, False])]  # an unbatched output is broadcast
    staged = fg.jit(fg.vmap(f, in_axes=(None, 0)))(0.5, np.array([1.0, 2.0]))
    np.testing.assert_allclose(staged["s"], np.cos(0.5) * np.array([1.0, 2.0]), rtol=1e-15)
    assert (3, [True, False]) in calls and (2, [False, True]) in calls


def test_derivatives_are_the_functions():
    f, calls = _make()
    g = fg.grad(lambda x: f(x, 3.0)["s"])(0.5)
    assert g == pytest.approx(3.0 * np.cos(0.5))
    _, t = fg.jvp(lambda x: f(x, 3.0)["s"], (0.5,), (1.0,))
    assert t == pytest.approx(3.0 * np.cos(0.5))
    assert calls == []


def test_rule_errors():
    @custom_vmap
    def f(x):
        return x * 2

    with pytest.raises(AttributeError, match="no vmap rule"):
        fg.vmap(f)(np.ones(2))
    f.def_vmap(lambda n, b, x: (x[0], True))  # wrong: drops the batch axis
    with pytest.raises(ValueError, match="output 0 of the vmap rule has shape"):
        fg.vmap(f)(np.ones((2, 3)))


def test_sequential_vmap_loops():
    seen = []

    def h(x, y):
        seen.append(np.shape(x))
        return x * 2 + y

    g = sequential_vmap(h)
    out = fg.vmap(g, in_axes=(0, None))(np.arange(3.0), 1.0)
    np.testing.assert_array_equal(out, [1.0, 3.0, 5.0])
    assert () in seen  # the body saw one example at a time
    jaxpr = fg.make_jaxpr(fg.vmap(g, in_axes=(0, None)))(np.arange(3.0), 1.0)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["scan"]
