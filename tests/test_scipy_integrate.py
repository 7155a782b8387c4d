"""funcgrad.scipy.integrate against scipy.integrate: values, derivatives, vmap, jit, errors."""
import numpy as np
import pytest
import scipy.integrate as si

import funcgrad as fg
from funcgrad.scipy import integrate as I
from funcgrad.test_util import check_grads

rng = np.random.default_rng(0)
Y = rng.standard_normal((3, 5))
X1 = np.sort(rng.uniform(0, 4, 5))
X0 = np.sort(rng.uniform(0, 4, 3))
XF = np.sort(rng.uniform(0, 4, (3, 5)), axis=1)


@pytest.mark.parametrize("kw", [dict(), dict(dx=0.3), dict(x=X1), dict(x=XF), dict(x=X0, axis=0), dict(axis=0)])
@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid"])
def test_values_match_scipy(name, kw):
    got, want = getattr(I, name)(Y, **kw), getattr(si, name)(Y, **kw)
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_initial_int_and_float32():
    np.testing.assert_allclose(I.cumulative_trapezoid(Y, X1, initial=0), si.cumulative_trapezoid(Y, X1, initial=0))
    assert I.trapezoid(np.arange(4)).dtype == np.float64
    assert I.trapezoid(Y.astype(np.float32)).dtype == np.float32


def test_derivatives_vmap_jit():
    check_grads(lambda y, x: I.trapezoid(y, x), (Y, X1), order=2)
    check_grads(lambda y: I.cumulative_trapezoid(y, dx=0.5, axis=0), (Y,), order=1)
    np.testing.assert_allclose(fg.vmap(lambda y: I.trapezoid(y, X1))(Y), [si.trapezoid(y, X1) for y in Y])
    f = lambda y, x: I.cumulative_trapezoid(y, x, initial=0)  # noqa: E731
    got, want = fg.jit(f)(Y, XF), f(Y, XF)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_bad_input():
    with pytest.raises(ValueError, match=r"trapezoid: x with shape \(4,\).*length 5"):
        I.trapezoid(Y, np.arange(4.0))
    with pytest.raises(ValueError, match="cumulative_trapezoid: initial"):
        I.cumulative_trapezoid(Y, initial=1.0)
    with pytest.raises(TypeError, match="trapezoid"):
        I.trapezoid("abc")
