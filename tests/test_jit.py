"""jit: caching, static arguments, inspection, logging, and composition with every
transform and with control flow."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors, lax
from funcgrad.test_util import check_grads

X = np.linspace(-1.0, 1.0, 5)
Y = np.linspace(0.0, 2.0, 5)


def kernel(x, y):
    return fnp.sin(x) * y + fnp.exp(-x * x) * 0.5 - fnp.tanh(y)


def test_values_and_decorator_forms():
    f = fg.jit(kernel)
    np.testing.assert_allclose(f(X, Y), kernel(X, Y), rtol=1e-15)
    assert isinstance(f(X, Y), np.ndarray)

    @fg.jit
    def g(x):
        return {"s": fnp.sum(x), "m": x * 2}

    out = g(X)
    assert set(out) == {"s", "m"} and isinstance(out["m"], np.ndarray)

    @fg.jit(static_argnums=1)
    def h(x, n):
        return x**n

    np.testing.assert_allclose(h(X, 3), X**3)


def test_cache_no_retrace_on_equal_types_retrace_on_changes():
    calls = []

    def f(x, n=1):
        calls.append(1)
        return x * n

    jf = fg.jit(f, static_argnames="n")
    jf(X)
    jf(X + 1.0)
    assert len(calls) == 1 and jf.cache_size() == 1
    jf(np.ones(3))  # new shape
    jf(X.astype(np.float32))  # new dtype
    jf(X, n=2)  # new static value
    assert len(calls) == 4 and jf.cache_size() == 4


def test_static_args_must_be_hashable():
    jf = fg.jit(lambda x, opts: x, static_argnums=1)
    with pytest.raises(TypeError, match="static argument 1 of type list is not hashable"):
        jf(X, [1, 2])


def test_python_control_flow_on_traced_value_is_an_error():
    with pytest.raises(errors.TracerBoolConversionError, match="test_jit.py"):
        fg.jit(lambda x: x if x.sum() > 0 else -x)(X)


def test_lower_as_text_and_compile_rejects_other_types():
    lowered = fg.jit(kernel).lower(X, Y)
    text = lowered.as_text()
    assert "# jaxpr" in text and "sin" in text and "# LLVM IR (before optimisation)" in text
    compiled = lowered.compile()
    np.testing.assert_allclose(compiled(X, Y), kernel(X, Y), rtol=1e-15)
    with pytest.raises(TypeError, match=r"takes \(f64\[5\], f64\[5\]\)"):
        compiled(np.ones(3), np.ones(3))


def test_log_compiles_names_the_cause(monkeypatch, capsys):
    monkeypatch.setenv("FUNCGRAD_LOG_COMPILES", "1")
    jf = fg.jit(lambda x: x * 2.0)
    jf(X)
    jf(np.ones(3))
    err = capsys.readouterr().err
    assert "first call" in err
    assert "argument 0 ('x'): f64[5] -> f64[3] (shape (5,) -> (3,))" in err


def test_grad_of_jit_and_jit_of_grad():
    f = fg.jit(kernel)
    g_ref = fg.grad(lambda x: fnp.sum(kernel(x, Y)))(X)
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(f(x, Y)))(X), g_ref, rtol=1e-14)
    np.testing.assert_allclose(fg.jit(fg.grad(lambda x: fnp.sum(kernel(x, Y))))(X), g_ref, rtol=1e-14)
    check_grads(lambda x: f(x, Y), (X,), order=2)
    text = str(fg.make_jaxpr(fg.grad(lambda x: fnp.sum(f(x, Y))))(X))
    assert "jit_call" in text and "_fwd" in text and "transpose_" in text


def test_vmap_of_jit_and_jit_of_vmap_grad():
    f = fg.jit(kernel)
    xs = np.stack([X, 2 * X])
    np.testing.assert_allclose(fg.vmap(f)(xs, np.stack([Y, Y])), np.stack([kernel(X, Y), kernel(2 * X, Y)]), rtol=1e-15)
    per_ex = fg.jit(fg.vmap(fg.grad(lambda w, x: fnp.sum(fnp.tanh(x * w))), in_axes=(None, 0)))
    w = np.array([0.3, -0.2, 0.1, 0.5, 1.0])
    ref = np.stack([fg.grad(lambda w: fnp.sum(fnp.tanh(x * w)))(w) for x in xs])
    np.testing.assert_allclose(per_ex(w, xs), ref, rtol=1e-14)


def test_nested_jit_is_inlined_when_compiled():
    inner = fg.jit(lambda x: fnp.sin(x) * 2.0)
    outer = fg.jit(lambda x: inner(x) + inner(x * 3.0))
    np.testing.assert_allclose(outer(X), np.sin(X) * 2 + np.sin(3 * X) * 2, rtol=1e-15)
    from funcgrad.lowering.inline import inline_calls

    closed = fg.make_jaxpr(lambda x: inner(x) + 1.0)(X)
    assert "jit_call" in str(closed) and "jit_call" not in str(inline_calls(closed))


def test_training_step_is_one_compiled_function():
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=(3, 2)), "b": np.zeros(2)}
    x, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))

    def loss(p, x, y):
        return fnp.mean((fnp.tanh(x @ p["w"] + p["b"]) - y) ** 2)

    @fg.jit
    def step(p, x, y):
        l, g = fg.value_and_grad(loss)(p, x, y)
        return fg.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), l

    p1, l1 = step(params, x, y)
    l_ref, g_ref = fg.value_and_grad(loss)(params, x, y)
    assert l1 == pytest.approx(l_ref, rel=1e-14)
    np.testing.assert_allclose(p1["w"], params["w"] - 0.1 * g_ref["w"], rtol=1e-14)
    p2, l2 = step(p1, x, y)
    assert l2 < l1 and step.cache_size() == 1


def test_control_flow_under_jit():
    def newton_sqrt(a):
        return lax.while_loop(lambda x: fnp.abs(x * x - a) > 1e-12 * a, lambda x: 0.5 * (x + a / x), a)

    js = fg.jit(newton_sqrt)
    assert js(2.0) == pytest.approx(np.sqrt(2.0), rel=1e-15)
    jg = fg.jit(fg.grad(newton_sqrt))
    for a in (2.0, 9.0):
        assert jg(a) == pytest.approx(1 / (2 * np.sqrt(a)), rel=1e-10)
    f = fg.jit(lambda x: lax.cond(fnp.sum(x) > 0, lambda v: v * 2.0, lambda v: -v, x))
    np.testing.assert_allclose(f(X + 2.0), (X + 2.0) * 2.0)
    np.testing.assert_allclose(f(X - 2.0), -(X - 2.0))
    W = np.eye(3) * 0.5
    rnn = fg.jit(lambda xs: lax.scan(lambda h, x: (fnp.tanh(W @ h + x), h), np.zeros(3), xs)[0])
    xs = np.ones((4, 3))
    h = np.zeros(3)
    for x in xs:
        h = np.tanh(W @ h + x)
    np.testing.assert_allclose(rnn(xs), h, rtol=1e-14)
