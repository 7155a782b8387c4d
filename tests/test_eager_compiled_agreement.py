"""Eager and compiled code give the same answer where NumPy would raise or give
platform-dependent values: failing factorisations are NaN (JAX's convention) and
float -> int casts map NaN to 0 and clamp infinities (docs/guide/semantics.md)."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

NOT_PD = np.array([[1.0, 2.0], [2.0, 1.0]])
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


def _both(f, *args):
    return f(*args), fg.jit(f)(*args)


@pytest.mark.parametrize("name, f, a", [
    ("cholesky", fnp.linalg.cholesky, NOT_PD),
    ("inv", fnp.linalg.inv, SINGULAR),
    ("solve", lambda a: fnp.linalg.solve(a, np.ones(2)), SINGULAR),
])
def test_failing_factorisation_is_nan_eager_and_compiled(name, f, a):
    eager, compiled = _both(f, a)
    assert np.isnan(eager).all(), (name, eager)
    np.testing.assert_array_equal(eager, compiled)


def test_only_the_failing_matrix_of_a_stack_is_nan():
    stack = np.stack([NOT_PD, np.array([[2.0, 1.0], [1.0, 2.0]])])
    eager, compiled = _both(fnp.linalg.cholesky, stack)
    assert np.isnan(eager[0]).all()
    np.testing.assert_allclose(eager[1], np.linalg.cholesky(stack[1]), rtol=1e-15)
    np.testing.assert_array_equal(eager, compiled)


def test_jitter_retry_idiom():
    # if isnan(L).any(): add jitter -- works because nothing raises.
    a = SINGULAR - 1e-9 * np.eye(2)
    l = fnp.linalg.cholesky(a)
    jitter = 1e-6
    while np.isnan(l).any():
        l = fnp.linalg.cholesky(a + jitter * np.eye(2))
        jitter *= 10
    np.testing.assert_allclose(l @ l.T, a + jitter / 10 * np.eye(2), atol=1e-12)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 3.7, -2.5])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_float_to_int_asarray_matches_compiled_cast(value, dtype):
    eager = fnp.asarray(value, dtype=dtype)
    compiled = fg.jit(lambda v: fnp.asarray(v, dtype=dtype))(np.float64(value))
    assert eager.dtype == compiled.dtype == dtype
    assert eager == compiled
    eager_arr = fnp.asarray(np.array([value]), dtype=dtype)
    assert eager_arr[0] == compiled


_IEEE_CASES = [
    ("log(0)", lambda x: fnp.log(x * 0.0)),
    ("1/0", lambda x: fnp.divide(1.0, x * 0.0)),
    ("sqrt(-1)", lambda x: fnp.sqrt(-x)),
    ("arccos(2)", lambda x: fnp.arccos(x + 1.0)),
    ("exp overflow", lambda x: fnp.exp(x * 1000.0)),
    ("0**-1", lambda x: fnp.power(x * 0.0, -1.0)),
    ("inf-inf", lambda x: fnp.subtract(fnp.exp(x * 1000.0), fnp.exp(x * 1000.0))),
]


@pytest.mark.parametrize("name, f", _IEEE_CASES, ids=[c[0] for c in _IEEE_CASES])
def test_eager_ieee_results_without_warnings(name, f):
    import warnings

    x = np.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning fails the test
        eager = f(x)
        fg.vmap(f)(x)
        fg.jvp(f, (x,), (x,))
    np.testing.assert_array_equal(eager, fg.jit(f)(x))


def test_user_numpy_code_keeps_its_own_error_state():
    import warnings

    fnp.log(0.0)  # funcgrad silences only its own primitives, not the caller's NumPy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            np.log(np.zeros(1))


_F32 = np.ones(2, np.float32)
_I32 = np.ones(2, np.int32)
_PY_SCALAR_PROGRAMS = [
    ("(x+.5)+b", lambda x, b: (x + 0.5) + b, 1.5, _F32),
    ("sin(x)+b", lambda x, b: fnp.sin(x) + b, 1.5, _F32),
    ("max(x)+b", lambda x, b: fnp.max(x) + b, 1.5, _F32),
    ("b/(x*x+1)", lambda x, b: b / (x * x + 1.0), 1.5, _F32),
    ("-x*2+b", lambda x, b: -x * 2 + b, 1.5, _F32),
    ("fnp.add(x,1)+b", lambda x, b: fnp.add(x, 1.0) + b, 1.5, _F32),
    ("(n+1)+bi", lambda n, b: (n + 1) + b, 3, _I32),
    ("max(n)+bi", lambda n, b: fnp.max(n) + b, 3, _I32),
    ("abs(n)+bi", lambda n, b: fnp.abs(n) + b, 3, _I32),
    ("n//2+bi", lambda n, b: n // 2 + b, 3, _I32),
]


@pytest.mark.parametrize("name, f, x, b", _PY_SCALAR_PROGRAMS, ids=[p[0] for p in _PY_SCALAR_PROGRAMS])
def test_python_scalar_arguments_give_the_same_dtype_eager_staged_and_compiled(name, f, x, b):
    # A Python scalar is weakly typed: Python's operators on it stay weak, funcgrad.numpy
    # functions give NumPy-style strong results -- identically eager, in make_jaxpr and jit.
    eager = f(x, b)
    staged = fg.make_jaxpr(f)(x, b).jaxpr.outvars[0].aval.dtype
    compiled = fg.jit(f)(x, b)
    assert eager.dtype == staged == compiled.dtype, (eager.dtype, staged, compiled.dtype)
    np.testing.assert_allclose(compiled, eager, rtol=1e-6)
