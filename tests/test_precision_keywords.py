"""JAX's ``precision=``/``preferred_element_type=`` keywords on the products, and
``lax.Precision``/``lax.dot``/``lax.dot_general``."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

A = np.arange(6.0).reshape(2, 3)
B = np.arange(12.0).reshape(3, 4)
V = np.arange(3.0)


def test_precision_enum():
    assert [p.value for p in (lax.Precision.DEFAULT, lax.Precision.HIGH, lax.Precision.HIGHEST)] == [0, 1, 2]
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("tensorfloat32") is lax.Precision.HIGH and lax.Precision("bfloat16") is lax.Precision.DEFAULT
    with pytest.raises(ValueError):
        lax.Precision("fast-ish")


@pytest.mark.parametrize("precision", [None, lax.Precision.HIGHEST, "high", (lax.Precision.DEFAULT, "highest")])
def test_products_accept_precision_and_ignore_it(precision):
    np.testing.assert_array_equal(fnp.dot(A, B, precision=precision), A @ B)
    np.testing.assert_array_equal(fnp.matmul(A, B, precision=precision), A @ B)
    np.testing.assert_array_equal(fnp.tensordot(A, B, axes=1, precision=precision), A @ B)
    np.testing.assert_array_equal(fnp.einsum("ij,jk", A, B, precision=precision), A @ B)
    assert fnp.vdot(V, V, precision=precision) == 5.0 and fnp.inner(V, V, precision=precision) == 5.0
    np.testing.assert_array_equal(lax.dot(A, B, precision=precision), A @ B)


def test_preferred_element_type_is_the_result_dtype():
    i = np.arange(6).reshape(2, 3)
    for f in (fnp.dot, fnp.matmul):
        out = f(i, i.T, preferred_element_type=np.float32)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, i @ i.T)
    assert fnp.tensordot(A, B, axes=1, preferred_element_type=np.float32).dtype == np.float32
    assert lax.dot(A, V, preferred_element_type=np.float32).dtype == np.float32
    out = lax.dot_general(A, B, (((1,), (0,)), ((), ())), precision=lax.Precision.HIGHEST,
                          preferred_element_type=np.float32)
    assert out.dtype == np.float32 and np.array_equal(out, (A @ B).astype(np.float32))


def test_keywords_under_jit_and_grad():
    f = fg.jit(lambda a, b: fnp.matmul(a, b, precision=lax.Precision.HIGHEST, preferred_element_type=np.float32))
    assert f(A, B).dtype == np.float32
    g = fg.grad(lambda a: fnp.sum(fnp.dot(a, B, precision="highest")))(A)
    np.testing.assert_allclose(g, np.broadcast_to(B.sum(axis=1), A.shape))


def test_bad_precision_and_shapes_are_typed_errors():
    with pytest.raises(TypeError, match="dot: precision="):
        fnp.dot(A, B, precision="bogus")
    with pytest.raises(TypeError, match="matmul: precision="):
        fnp.matmul(A, B, precision=(None, None, None))
    with pytest.raises(TypeError, match=r"dot: incompatible shapes.*\(2, 3\).*\(4,\)"):
        lax.dot(A, np.ones(4))
