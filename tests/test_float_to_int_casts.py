"""Float -> integer casts have one answer on every path: truncate toward zero, saturate
at the integer range, NaN -> 0 (the README's rule; NumPy's own cast gives platform
values there, e.g. ``INT_MIN`` for NaN on x86-64).

The paths: ``lax.convert_element_type``, ``fnp.astype``, ``fnp.asarray``/``fnp.array``
with ``dtype=``, and the ``.astype`` method of eager values and of tracers; each eagerly,
under ``jit``, ``vmap``, ``jit(vmap)`` and inside ``grad``.
"""
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

X = np.array([np.nan, np.inf, -np.inf, 1e20, -1e20, 3.7, -3.7, 300.7, -1.5, 2.0**31, -2.0**31 - 1,
              2.0**63, -0.0, 0.99, 127.5, -128.5, 255.9])
INTS = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64]


def _rule(x, dtype):
    """The rule, written out independently of funcgrad."""
    info = np.iinfo(dtype)
    out = []
    for v in x.astype(np.float64).tolist():
        if np.isnan(v):
            out.append(0)
        elif v >= info.max:
            out.append(info.max)
        elif v <= info.min:
            out.append(info.min)
        else:
            out.append(int(v))  # (truncates toward zero)
    return np.array(out, dtype)


PATHS = {
    "lax.convert_element_type": lambda v, dt: lax.convert_element_type(v, dt),
    "fnp.astype": lambda v, dt: fnp.astype(v, dt),
    "fnp.asarray": lambda v, dt: fnp.asarray(v, dtype=dt),
    "fnp.array": lambda v, dt: fnp.array(v, dtype=dt),
    "method": lambda v, dt: v.astype(dt),
}


def _transforms(f):
    return {"eager": lambda v: f(fnp.asarray(v)), "jit": fg.jit(f), "vmap": fg.vmap(f),
            "jit(vmap)": fg.jit(fg.vmap(f))}


@pytest.mark.parametrize("src", [np.float64, np.float32])
@pytest.mark.parametrize("path", sorted(PATHS))
def test_float_to_int_cast_has_one_answer(path, src):
    x = X.astype(src)
    for dt in INTS:
        want = _rule(x, dt)
        for how, g in _transforms(lambda v: PATHS[path](v, dt)).items():
            got = np.asarray(g(x))
            assert got.dtype == np.dtype(dt), (path, how, dt)
            np.testing.assert_array_equal(got, want, err_msg=f"{path} {how} {src.__name__} -> {dt.__name__}")


def test_eager_value_astype_is_a_value_and_keeps_numpy_options():
    v = fnp.asarray(np.array([np.nan, 1e20, -2.5]))
    got = v.astype(np.int32)
    assert type(got) is type(v) and not got.flags.writeable
    np.testing.assert_array_equal(got, [0, 2**31 - 1, -2])
    assert v.astype(np.float64, copy=False) is v
    np.testing.assert_array_equal(v.astype(np.float32), np.array([np.nan, 1e20, -2.5], np.float32))
    with pytest.raises(TypeError):
        v.astype(np.int32, casting="same_kind")  # NumPy's casting check stays
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        with pytest.raises(np.exceptions.ComplexWarning):
            fnp.asarray(np.array([np.nan + 1j])).astype(np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        c = fnp.asarray(np.array([np.nan + 1j, 1e30 - 2j, -3.5 + 0j]))
        np.testing.assert_array_equal(c.astype(np.int32), [0, 2**31 - 1, -3])
        np.testing.assert_array_equal(fg.jit(lambda c: c.astype(np.int32))(np.asarray(c)), [0, 2**31 - 1, -3])


def test_cast_inside_grad():
    def f(x):
        return fnp.sum(x * x.astype(np.int32))  # the cast's value scales the gradient

    x = np.array([np.nan, np.inf, 1e20, -3.7, 2.5])
    want = _rule(x, np.int32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        for g in (fg.grad(f), fg.jit(fg.grad(f)), fg.vmap(fg.grad(lambda x: f(x[None])))):
            np.testing.assert_array_equal(g(x), want)
