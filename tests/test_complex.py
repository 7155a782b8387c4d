"""Complex dtypes (issue #16): promotion, creation, casts, and the derivative conventions
(JAX's: grad of a real-valued f(x + iy) is df/dx - i df/dy; ``holomorphic=True`` for
complex outputs; vjp is the linear transpose, no conjugation). Values per function are
in the op table (``tests/op_rows/complex.py``)."""
import itertools
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import dtypes

ALL = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
       np.float32, np.float64, np.complex64, np.complex128]


# --- promotion ---------------------------------------------------------------------------------
@pytest.mark.parametrize("a,b", [(a, b) for a, b in itertools.product(ALL, ALL)
                                 if np.dtype(a).kind == "c" or np.dtype(b).kind == "c"])
def test_promotion_table_with_complex_matches_numpy(a, b):
    x, y = np.ones(2, a), np.ones(2, b)
    assert fnp.add(x, y).dtype == np.add(x, y).dtype
    assert fg.make_jaxpr(fnp.add)(x, y).jaxpr.outvars[0].aval.dtype == np.add(x, y).dtype


@pytest.mark.parametrize("dt", ALL)
def test_weak_python_complex_matches_numpy(dt):
    x = np.ones(2, dt)
    expected = (x * 1j).dtype  # NEP 50: 1j is weak
    assert fnp.multiply(x, 1j).dtype == expected
    assert fg.jit(lambda v: v * 1j)(x).dtype == expected
    assert dtypes.result_type((np.dtype(dt), False), (dtypes.complex128, True))[0] == expected


def test_weak_complex_examples_from_the_issue():
    assert (fnp.asarray(np.ones(2, np.float32)) * 1j).dtype == np.complex64
    assert fnp.add(np.ones(2, np.int32), 1j).dtype == np.complex128
    assert fnp.add(np.ones(2, np.complex64), 2.5).dtype == np.complex64


def test_creation_and_names():
    assert fnp.array([1 + 2j, 3.0]).dtype == np.complex128
    assert fnp.zeros(3, dtype=fnp.complex64).dtype == np.complex64
    assert fnp.ones(2, dtype=complex).dtype == np.complex128
    assert fnp.complex128 is np.complex128 and fnp.complexfloating is np.complexfloating
    assert fnp.iscomplexobj(np.zeros(1, np.complex64)) and not fnp.iscomplexobj(np.zeros(1))
    assert fg.jit(lambda z: np.bool_(fnp.iscomplexobj(z)))(np.zeros(1, np.complex64))
    assert str(fg.make_jaxpr(lambda z: z * 2)(np.zeros(2, np.complex64))).count("c64[2]") == 3


def test_astype_complex_to_real_warns_and_keeps_the_real_part():
    z = np.array([1 + 2j, -3 - 4j])
    for f in (lambda v: v.astype(np.float32), fg.jit(lambda v: v.astype(np.float32))):
        with pytest.warns(np.exceptions.ComplexWarning):
            got = f(fnp.asarray(z) if f.__name__ == "<lambda>" else z)
        np.testing.assert_array_equal(got, np.array([1.0, -3.0], np.float32))
        assert got.dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(fnp.real(z), [1.0, -3.0])  # the warning-free way


# --- the derivative conventions (JAX's) -----------------------------------------------------
def test_grad_of_abs_squared_is_jax_value():
    # jax.grad(lambda z: jnp.abs(z) ** 2)(3 + 4j) == 6 - 8j
    for f in (lambda z: fnp.abs(z) ** 2, lambda z: fnp.real(z * fnp.conj(z))):
        assert np.allclose(fg.grad(f)(3 + 4j), 6 - 8j)
        assert np.allclose(fg.grad(f)(np.complex64(3 + 4j)), 6 - 8j)
        assert fg.grad(f)(np.complex64(3 + 4j)).dtype == np.complex64
        with fg.transforms.eager_vjp.disabled():  # the general reverse mode agrees
            assert np.allclose(fg.grad(f)(3 + 4j), 6 - 8j)
        assert np.allclose(fg.jit(fg.grad(f))(3 + 4j), 6 - 8j)


def _fd_conj_grad(f, z, eps=1e-6):
    """df/dx - i df/dy by central differences, elementwise over ``z``."""
    out = np.zeros_like(z)
    for i in range(z.size):
        e = np.zeros_like(z)
        e.flat[i] = eps
        dx = (f(z + e) - f(z - e)) / (2 * eps)
        dy = (f(z + 1j * e) - f(z - 1j * e)) / (2 * eps)
        out.flat[i] = dx - 1j * dy
    return out


def test_grad_of_a_complex_matmul_loss():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    b = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))

    def loss(a):
        c = a @ b
        return fnp.sum(fnp.real(c * fnp.conj(c))) + fnp.sum(fnp.imag(c))

    g = fg.grad(loss)(a)
    c = a @ b
    np.testing.assert_allclose(g, 2 * np.conj(c) @ b.T - 1j * np.ones((2, 2)) @ b.T, rtol=1e-12)
    np.testing.assert_allclose(g, _fd_conj_grad(lambda v: float(loss(v)), a), rtol=1e-6, atol=1e-8)


def test_holomorphic_grad_and_jacobians():
    z = np.complex128(0.3 - 1.2j)
    assert np.allclose(fg.grad(lambda v: v ** 2, holomorphic=True)(z), 2 * z)
    assert np.allclose(fg.grad(fnp.sin, holomorphic=True)(z), np.cos(z))
    zs = np.array([0.5 + 1j, -2j])
    expected = np.diag(np.cos(zs))
    np.testing.assert_allclose(fg.jacfwd(fnp.sin, holomorphic=True)(zs), expected, rtol=1e-14)
    np.testing.assert_allclose(fg.jacrev(fnp.sin, holomorphic=True)(zs), expected, rtol=1e-14)
    # jacrev of a real function of complex inputs: rows are grad's (conjugate convention)
    np.testing.assert_allclose(fg.jacrev(lambda v: fnp.abs(v) ** 2)(zs), np.diag(2 * np.conj(zs)), rtol=1e-14)


def test_complex_output_needs_holomorphic():
    with pytest.raises(TypeError, match="holomorphic=True"):
        fg.grad(lambda v: v ** 2)(1j)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        fg.grad(lambda v: v ** 2, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="holomorphic=True requires a complex output"):
        fg.grad(lambda v: fnp.abs(v), holomorphic=True)(1j)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        fg.jacfwd(fnp.sin)(np.array([1j]))
    with pytest.raises(TypeError, match="jacrev.*requires real-valued outputs"):
        fg.jacrev(fnp.sin)(np.array([1j]))


def test_vjp_is_the_linear_transpose_without_conjugation():
    c = np.complex128(2 - 3j)
    _, pullback = fg.vjp(lambda z: c * z, np.complex128(1 + 1j))
    assert np.allclose(pullback(np.complex128(1j))[0], c * 1j)
    _, pullback = fg.vjp(fnp.real, np.complex128(1 + 1j))
    assert np.allclose(pullback(1.0)[0], 1.0)
    _, pullback = fg.vjp(fnp.imag, np.complex128(1 + 1j))
    assert np.allclose(pullback(1.0)[0], -1j)
    _, pullback = fg.vjp(fnp.conj, np.complex128(1 + 1j))
    assert np.allclose(pullback(np.complex128(2 + 5j))[0], 2 - 5j)
    t = fg.linear_transpose(lambda x, y: lax.complex(x, y), 1.0, 1.0)(np.complex128(3 + 4j))
    assert np.allclose(t, (3.0, -4.0))


def test_jvp_in_real_and_imaginary_directions():
    z = np.complex128(0.7 + 0.2j)
    f = lambda v: fnp.abs(v) ** 2  # noqa: E731 - real output, not holomorphic
    _, tx = fg.jvp(f, (z,), (np.complex128(1),))
    _, ty = fg.jvp(f, (z,), (np.complex128(1j),))
    assert np.allclose([tx, ty], [2 * z.real, 2 * z.imag])
    _, t = fg.jvp(fnp.exp, (z,), (np.complex128(1j),))
    assert np.allclose(t, np.exp(z) * 1j)


def test_sign_derivative_moves_along_the_unit_circle():
    z = np.array([0.6 - 0.8j, 2 + 1j])
    fg.test_util.check_grads(fnp.sign, (z,), order=2)
    fg.test_util.check_grads(fnp.abs, (z,), order=2)


def test_allow_int_next_to_complex():
    g = fg.grad(lambda z, n: fnp.abs(z) ** 2 * n, argnums=(0, 1), allow_int=True)(3 + 4j, 2)
    assert np.allclose(g[0], 12 - 16j) and g[1] == 0


def test_vmap_of_grad_matches_loop():
    zs = np.array([1 + 1j, 2 - 1j, -0.5j])
    f = fg.grad(lambda v: fnp.abs(fnp.sin(v)) ** 2)
    np.testing.assert_allclose(fg.vmap(f)(zs), [f(z) for z in zs], rtol=1e-13)


def test_jit_equals_eager_through_the_evaluator():
    z = np.array([1 + 2j, -0.5 + 0.1j], np.complex64)

    def f(v):
        w = fnp.exp(v) * fnp.conj(v) + 1j
        return fnp.sum(fnp.abs(w)), w @ w, fnp.angle(w)

    for got, want in zip(fg.jit(f)(z), f(z)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_control_flow_carries_complex():
    def f(z):
        return fg.lax.fori_loop(0, 3, lambda i, c: c * (1 + 1j), z)

    assert np.allclose(f(np.complex128(1.0)), (1 + 1j) ** 3)
    assert np.allclose(fg.grad(lambda z: fnp.real(f(z)))(np.complex128(1.0)), (1 + 1j) ** 3)


def test_primitive_errors_name_the_op_and_types():
    with pytest.raises(TypeError, match=r"complex: .*f64\[2\], c128\[2\]"):
        lax.complex(np.ones(2), np.ones(2, np.complex128))
    with pytest.raises(TypeError, match=r"real: operand must be complex, got f64\[2\]"):
        lax.real(np.ones(2))
    with pytest.raises(TypeError, match=r"atan2: operand must be floating-point, got c128\[2\]"):
        fg.make_jaxpr(lax.atan2)(np.ones(2, complex), np.ones(2, complex))  # (NumPy has no complex arctan2)
    with pytest.raises(TypeError, match=r"arctan2: not supported for complex input \(got complex128"):
        fg.make_jaxpr(fnp.arctan2)(np.ones(2, complex), np.ones(2, complex))
