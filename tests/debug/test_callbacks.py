"""``pure_callback`` and ``io_callback``: values against NumPy/SciPy, shape/dtype checks,
``vmap_method`` variants, DCE, ordering, derivatives through ``custom_jvp``/``custom_vjp``."""
import numpy as np
import pytest
import scipy.special

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax


def sds(x):
    x = x if hasattr(x, "dtype") else np.asarray(x)
    return fg.ShapeDtypeStruct(x.shape, x.dtype)


def j0(x):
    return fg.pure_callback(scipy.special.j0, fg.ShapeDtypeStruct(x.shape, x.dtype), x)


@pytest.mark.parametrize("wrap", [lambda g: g, fg.jit], ids=["eager", "jit"])
def test_pure_callback_values_and_dtypes(wrap):
    x = np.linspace(0.0, 3.0, 5)
    out = wrap(lambda v: j0(v) * 2)(x)
    np.testing.assert_allclose(out, 2 * scipy.special.j0(x), rtol=1e-15)
    assert out.dtype == np.float64
    x32 = x.astype(np.float32)
    out32 = wrap(j0)(x32)
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, scipy.special.j0(x32), rtol=1e-6)


def test_pure_callback_pytrees_and_kwargs():
    def host(a, *, b):
        return {"s": a + b, "p": (a * b).astype(np.float32)}

    res = {"s": sds(np.zeros(3)), "p": fg.ShapeDtypeStruct((3,), np.float32)}
    out = fg.jit(lambda a, b: fg.pure_callback(host, res, a, b=b))(np.arange(3.0), np.ones(3))
    np.testing.assert_array_equal(out["s"], [1.0, 2.0, 3.0])
    assert out["p"].dtype == np.float32


@pytest.mark.parametrize("wrap", [lambda g: g, fg.jit], ids=["eager", "jit"])
def test_pure_callback_wrong_result_names_both(wrap):
    f = wrap(lambda x: fg.pure_callback(lambda v: v[:2], sds(np.zeros(3)), x))
    with pytest.raises(TypeError, match=r"pure_callback\(<lambda>\).*shape \(2,\).*declares shape \(3,\)"):
        f(np.zeros(3))
    g = wrap(lambda x: fg.pure_callback(lambda v: v.astype(np.float32), sds(np.zeros(3)), x))
    with pytest.raises(TypeError, match="dtype float32.*declares.*dtype float64"):
        g(np.zeros(3))
    h = wrap(lambda x: fg.pure_callback(lambda v: (v, v), sds(np.zeros(3)), x))
    with pytest.raises(TypeError, match="structure"):
        h(np.zeros(3))


def test_bad_declarations_are_type_errors():
    with pytest.raises(TypeError, match="result_shape_dtypes leaf 0 is a str"):
        fg.pure_callback(np.sin, "f64", 1.0)
    with pytest.raises(ValueError, match="vmap_method"):
        fg.pure_callback(np.sin, sds(1.0), 1.0, vmap_method="bogus")
    with pytest.raises(TypeError, match="callback must be callable"):
        fg.io_callback(3, None, 1.0)


def test_pure_callback_result_unused_is_dce_d_io_callback_is_not():
    calls = []

    def pure(x):
        calls.append("pure")
        return x

    def io(x):
        calls.append("io")
        return x

    @fg.jit
    def f(x):
        fg.pure_callback(pure, sds(1.0), x)
        fg.io_callback(io, sds(1.0), x)
        return x + 1

    assert f(1.0) == 2.0
    assert calls == ["io"]


def test_io_callback_order_and_loop_iterations():
    log = []

    def record(tag, x):
        log.append((int(tag), float(x)))
        return np.float64(x) * 10

    @fg.jit
    def f(x):
        def body(i, c):
            return c + fg.io_callback(record, sds(1.0), i, c, ordered=True)

        y = lax.fori_loop(0, 3, body, x)
        fg.io_callback(lambda v: log.append(("end", float(v))), None, y)
        return y

    assert f(1.0) == 1331.0
    assert log == [(0, 1.0), (1, 11.0), (2, 121.0), ("end", 1331.0)]


def test_io_callback_under_vmap_runs_per_lane_and_taken_branch():
    log = []

    def f(x):
        return lax.cond(x > 0, lambda v: fg.io_callback(lambda u: (log.append(float(u)), u * 2)[1], sds(1.0), v),
                        lambda v: -v, x)

    out = fg.jit(fg.vmap(f))(np.array([1.0, -2.0, 3.0]))
    np.testing.assert_array_equal(out, [2.0, 2.0, 6.0])
    assert log == [1.0, 3.0]


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_vmap_methods_agree_with_a_loop(method):
    calls = []

    def host(x, y):
        calls.append((x.shape, y.shape))
        return np.sin(x) * y

    f = lambda x, y: fg.pure_callback(host, sds(x), x, y, vmap_method=method)  # noqa: E731
    xs, y = np.arange(6.0).reshape(3, 2), np.array([1.0, 2.0])
    out = fg.jit(fg.vmap(f, in_axes=(0, None)))(xs, y)
    np.testing.assert_allclose(out, np.stack([np.sin(x) * y for x in xs]))
    want = {"sequential": [((2,), (2,))] * 3, "expand_dims": [((3, 2), (1, 2))],
            "broadcast_all": [((3, 2), (3, 2))]}[method]
    assert calls == want


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_nested_vmap_methods(method):
    f = lambda x, y: fg.pure_callback(lambda a, b: a * b + 1, sds(np.zeros(())), x, y, vmap_method=method)  # noqa: E731
    xs, ys = np.arange(6.0).reshape(2, 3), np.array([10.0, 20.0, 30.0])
    out = fg.vmap(fg.vmap(f, in_axes=(0, 0)), in_axes=(0, None))(xs, ys)
    np.testing.assert_allclose(out, xs * ys + 1)


def test_vmap_without_method_raises_like_jax():
    with pytest.raises(NotImplementedError, match="explicit vmap_method"):
        fg.vmap(lambda x: fg.pure_callback(np.sin, sds(1.0), x))(np.arange(3.0))


def test_grad_of_pure_callback_points_to_custom_jvp():
    with pytest.raises(ValueError, match="custom_jvp"):
        fg.grad(lambda x: fg.pure_callback(np.sin, sds(1.0), x))(1.0)
    with pytest.raises(ValueError, match="custom_jvp"):
        fg.jit(fg.grad(lambda x: fg.io_callback(np.sin, sds(1.0), x)))(1.0)
    # no tangent flows in: fine
    assert fg.grad(lambda x: x * fg.pure_callback(np.sin, sds(1.0), 0.5))(2.0) == np.sin(0.5)


@fg.custom_jvp
def host_sin(x):
    return fg.pure_callback(np.sin, sds(x), x, vmap_method="expand_dims")


@host_sin.defjvp
def _host_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return host_sin(x), fg.pure_callback(np.cos, sds(x), x, vmap_method="expand_dims") * t


@fg.custom_vjp
def host_exp(x):
    return fg.pure_callback(np.exp, sds(x), x)


host_exp.defvjp(lambda x: (host_exp(x), x), lambda x, ct: (ct * fg.pure_callback(np.exp, sds(x), x),))


@pytest.mark.parametrize("wrap", [lambda g: g, fg.jit], ids=["eager", "jit"])
def test_custom_rules_around_pure_callback(wrap):
    x = np.array([0.3, 1.1])
    g = wrap(fg.grad(lambda v: fnp.sum(host_sin(v) ** 2)))(x)
    np.testing.assert_allclose(g, 2 * np.sin(x) * np.cos(x), rtol=1e-14)
    fg.test_util.check_grads(lambda v: host_sin(v) * v, (x,), order=1)
    np.testing.assert_allclose(wrap(fg.grad(lambda v: fnp.sum(host_exp(v))))(x), np.exp(x), rtol=1e-14)
    np.testing.assert_allclose(wrap(fg.vmap(fg.grad(lambda v: host_sin(v))))(x), np.cos(x), rtol=1e-14)
