"""Every transform takes any callable, as JAX's do: a ``functools.partial``, an instance
of a class with ``__call__``, a bound method, a NumPy ufunc, ``funcgrad.numpy``'s
functions, a builtin. Results, names in messages, pictures and logs, and the wrapper
metadata (``__name__``, ``__qualname__``, ``__doc__``, ``__wrapped__``) are checked for
each kind, against the eager values."""
import functools
import inspect
import pickle

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config
from funcgrad.core.wrapping import fun_name


def scaled_sine(a, x):
    """Sine of a scaled argument."""
    return fnp.sin(a * x)


def sine_plus(x, b=0.0):
    return fnp.sin(2.0 * x) + b


class Scaled:
    """A model: sine of a scaled argument."""

    def __init__(self, a):
        self.a = a
        self.lower = "state, not the jit's method"  # (a callable instance's state is not metadata)

    def __call__(self, x):
        return fnp.sin(self.a * x)

    def apply(self, x):
        """The same, as a method."""
        return fnp.sin(self.a * x)


X = np.array([0.3, -1.2, 0.7])
XS = np.stack([X, 2 * X])

# callable -> the name messages show
CALLABLES = {
    "partial": (functools.partial(scaled_sine, 2.0), "scaled_sine"),
    "partial_keyword": (functools.partial(sine_plus, b=0.5), "sine_plus"),
    "partial_of_partial": (functools.partial(functools.partial(scaled_sine), 2.0), "scaled_sine"),
    "callable_instance": (Scaled(2.0), "Scaled"),
    "bound_method": (Scaled(2.0).apply, "apply"),
    "numpy_ufunc": (np.sin, "sin"),
    "funcgrad_numpy": (fnp.sin, "sin"),
    "builtin": (abs, "abs"),
    "lambda": (lambda x: fnp.sin(2.0 * x), "<lambda>"),
}
IDS = sorted(CALLABLES)


def fun(kind):
    return CALLABLES[kind][0]


def eager(kind, x=X):
    return np.asarray(fun(kind)(x))


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def total(f):
    return lambda x: fnp.sum(f(x))


@pytest.mark.parametrize("kind", IDS)
def test_jit_runs_any_callable(kind):
    f = fun(kind)
    jf = fg.jit(f)
    close(jf(X), eager(kind))
    close(jf(X), eager(kind))  # (the cached call)
    close(fg.jit(lambda x: fg.jit(f)(x))(X), eager(kind))
    close(jf.lower(X).compile()(X), eager(kind))
    assert "jit_call" not in jf.lower(X).as_text().split("# LLVM IR")[0]


@pytest.mark.parametrize("kind", IDS)
def test_differentiation_and_batching_of_any_callable(kind):
    f = fun(kind)
    want = fg.grad(total(f))(X)
    close(fg.grad(total(fg.jit(f)))(X), want)
    close(fg.jit(fg.grad(total(f)))(X), want)
    v, g = fg.value_and_grad(total(fg.jit(f)))(X)
    close(v, eager(kind).sum())
    close(g, want)
    close(fg.vmap(f)(XS), np.stack([eager(kind, r) for r in XS]))
    close(fg.vmap(fg.jit(f))(XS), np.stack([eager(kind, r) for r in XS]))
    close(fg.jit(fg.checkpoint(f))(X), eager(kind))
    close(fg.grad(total(fg.checkpoint(f)))(X), want)
    close(fg.jvp(fg.jit(f), (X,), (np.ones(3),))[1], fg.jvp(f, (X,), (np.ones(3),))[1])


@pytest.mark.parametrize("kind", IDS)
def test_custom_rules_around_any_callable(kind):
    f = fun(kind)
    cj = fg.custom_jvp(f)
    cj.defjvp(lambda primals, tangents: fg.jvp(f, primals, tangents))
    cv = fg.custom_vjp(f)
    cv.defvjp(lambda x: (f(x), x), lambda x, ct: fg.vjp(f, x)[1](ct))
    want = fg.grad(total(f))(X)
    for c in (cj, cv):
        assert c.__name__ == CALLABLES[kind][1]
        close(c(X), eager(kind))
        close(fg.jit(c)(X), eager(kind))
        close(fg.grad(total(c))(X), want)
        close(fg.jit(fg.grad(total(c)))(X), want)


@pytest.mark.parametrize("kind", IDS)
def test_export_pickle_and_staging_of_any_callable(kind):
    f = fun(kind)
    name = CALLABLES[kind][1]
    e = fg.export(fg.jit(f))(X)
    assert e.fun_name == name
    close(e.call(X), eager(kind))
    close(fg.deserialize(e.serialize()).call(X), eager(kind))
    jf = fg.jit(f)
    jf(X)
    loaded = pickle.loads(pickle.dumps(jf))
    close(loaded(X), eager(kind))
    assert name in repr(loaded)
    assert f"name={name}" in str(fg.make_jaxpr(lambda x: fg.jit(f)(x))(X))  # the jit_call is named
    assert fg.make_jaxpr(f).__name__ == f"make_jaxpr({name})"
    close(fg.jit(fg.named_call(f))(X), eager(kind))


@pytest.mark.parametrize("kind", IDS)
def test_pictures_name_any_callable(kind):
    f = fun(kind)
    name = CALLABLES[kind][1]
    assert name in fg.draw(f)(X).source
    assert f"jit({name})" in fg.jit(f).lower(X).draw().source


# --- wrapper metadata ----------------------------------------------------------------------

def test_jit_carries_the_metadata_of_a_function():
    def f(x: np.ndarray) -> np.ndarray:
        """Doc of f."""
        return x

    f.custom_attribute = 7
    f.lower = "a function attribute must not hide jit(f).lower"
    jf = fg.jit(f)
    assert (jf.__name__, jf.__qualname__, jf.__doc__, jf.__module__) == (
        "f", f.__qualname__, "Doc of f.", __name__)
    assert jf.__wrapped__ is f and jf.__annotations__ == f.__annotations__
    assert jf.custom_attribute == 7 and callable(jf.lower)
    assert inspect.signature(jf) == inspect.signature(f)


def test_jit_of_a_partial_takes_its_function_s_name_and_doc():
    p = functools.partial(scaled_sine, 2.0)
    jp = fg.jit(p)
    assert (jp.__name__, jp.__qualname__, jp.__doc__) == ("scaled_sine", "scaled_sine", scaled_sine.__doc__)
    assert jp.__wrapped__ is p and jp.__module__ == __name__
    assert list(inspect.signature(jp).parameters) == ["x"]  # (the partial's signature)
    assert repr(jp).startswith("<jit(scaled_sine)")


def test_jit_of_a_callable_instance_is_named_by_its_class():
    m = Scaled(2.0)
    jm = fg.jit(m)
    assert (jm.__name__, jm.__qualname__, jm.__doc__) == ("Scaled", "Scaled", Scaled.__doc__)
    assert jm.__wrapped__ is m and callable(jm.lower) and "a" not in vars(jm)
    close(jm.lower(X).compile()(X), np.sin(2.0 * X))


def test_jit_of_a_bound_method_and_a_ufunc():
    jb = fg.jit(Scaled(2.0).apply)
    assert (jb.__name__, jb.__qualname__, jb.__doc__) == ("apply", "Scaled.apply", Scaled.apply.__doc__)
    ju = fg.jit(np.sin)
    assert ju.__name__ == ju.__qualname__ == "sin" and ju.__doc__ == np.sin.__doc__


def test_the_other_transforms_carry_the_name_too():
    p = functools.partial(scaled_sine, 2.0)
    for t in (fg.grad(total(p)), fg.vmap(p), fg.checkpoint(p), fg.custom_jvp(p), fg.custom_vjp(p)):
        assert t.__wrapped__ is not None
    for t in (fg.vmap(p), fg.checkpoint(p), fg.custom_jvp(p), fg.custom_vjp(p), fg.grad(p),
              fg.value_and_grad(p)):
        assert t.__name__ == "scaled_sine", t


def test_fun_name_falls_back_gracefully():
    class NoName:
        def __call__(self, x):
            return x

    odd = functools.partial(print)
    odd.__name__ = "renamed"  # (a partial's own name wins)
    assert fun_name(NoName()) == "NoName" and fun_name(odd) == "renamed" and fun_name(print) == "print"
    nameless = fg.jit(NoName())
    assert nameless.__name__ == "NoName" and nameless.__doc__ is None
    close(nameless(X), X)


def test_jit_of_a_non_callable_is_a_type_error():
    with pytest.raises(TypeError, match="jit: expected a function, got int"):
        fg.jit(3)


# --- names in messages and logs ----------------------------------------------------------------

def test_error_messages_name_the_partial_s_function():
    p = functools.partial(scaled_sine, 2.0)
    with pytest.raises(TypeError, match=r"grad\(scaled_sine\).*scalar"):
        fg.grad(p)(X)
    with pytest.raises(ValueError, match=r"vmap\(scaled_sine\)"):
        fg.vmap(p, in_axes=(0, 0))(XS)
    with pytest.raises(ValueError, match=r"jit\(scaled_sine\): static_argnums"):
        fg.jit(p, static_argnums=(3,))(X)
    with pytest.raises(TypeError, match=r"jit\(Scaled\): the function's output is a str"):
        fg.jit(type("Scaled", (), {"__call__": lambda self, x: "text"})())(X)


def test_compile_log_and_cache_miss_explanations_name_any_callable(monkeypatch, capfd):
    monkeypatch.setenv(config.LOG_COMPILES, "1")
    monkeypatch.setenv(config.EXPLAIN_CACHE_MISSES, "1")
    jp = fg.jit(functools.partial(scaled_sine, 2.0))
    jm = fg.jit(Scaled(2.0))
    capfd.readouterr()
    jp(X)
    jp(XS)
    jm(X)
    err = capfd.readouterr().err
    assert "[funcgrad] compiling jit(scaled_sine) [cache size 0]: first call" in err
    assert "[funcgrad] compiling jit(scaled_sine) [cache size 1]: argument 0 ('x'): f64[3] -> f64[2,3]" in err
    assert "jit(scaled_sine): cache miss, tracing again (retrace 1" in err
    assert "[funcgrad] compiling jit(Scaled) [cache size 0]: first call" in err


def signed_scale(a, x):
    if fnp.sum(x) > 0:  # (Python control flow on a traced value: autograph converts it)
        return x * a
    return -x


def test_autograph_converts_the_function_of_a_partial():
    j = fg.jit(functools.partial(signed_scale, 2.0), autograph=True)
    close(j(X + 1.0), (X + 1.0) * 2.0)
    close(j(-X - 1.0), X + 1.0)
    assert j.__name__ == "signed_scale"
    close(fg.grad(total(j))(-X - 1.0), -np.ones(3))


class SignedScale:
    def __call__(self, x):
        if fnp.sum(x) > 0:
            return x * 2.0
        return -x


def test_autograph_of_a_callable_instance_keeps_its_name():
    m = SignedScale()
    j = fg.jit(m, autograph=True)
    close(j(X + 1.0), (X + 1.0) * 2.0)
    close(j(-X - 1.0), X + 1.0)
    assert (j.__name__, j.__wrapped__) == ("SignedScale", m)
    assert fg.jit(autograph=True)(m).__name__ == "SignedScale"  # (the decorator form)
