"""Adversarial review of issue #17's fast paths (direct staging, the eager native entry,
vjp's cotangent rule): each fast path gives what the general path gives."""
import types

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import lax_api, staging
from funcgrad.numpy_api import staged

_FLOAT0 = np.dtype([("float0", np.void, 0)])  # jax.dtypes.float0


def test_vjp_takes_float0_cotangents_for_integer_outputs():
    # JAX's cotangent type for an integer/bool output is float0: accepted (shape checked)
    x = np.array([0.5, 2.0, 1.0], np.float32)
    _, pull = fg.vjp(lambda v: (v * 2, fnp.argmax(v), v > 1), x)
    (g,) = pull((np.ones(3, np.float32), np.zeros((), _FLOAT0), np.zeros(3, _FLOAT0)))
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match=r"vjp: cotangent 1 .*\(2,\).*\(\)"):
        pull((np.ones(3, np.float32), np.zeros(2, _FLOAT0), np.zeros(3, _FLOAT0)))
    with pytest.raises(TypeError, match="vjp: cotangent 0"):  # not for a float output
        pull((np.zeros(3, _FLOAT0), np.zeros((), _FLOAT0), np.zeros(3, _FLOAT0)))


def _jaxpr_and_value(fn, x):
    try:
        out = np.asarray(fg.jit(fn)(x))
        return str(fg.make_jaxpr(fn)(x)), out.dtype, repr(out.tolist())
    except (TypeError, ValueError, OverflowError) as e:
        return type(e).__name__, str(e)


_SCALARS = [2, 2.5, True, 1.5j, np.float32(2), np.int8(3), np.array(2.0), 1000]
_OPS = [lambda a, b: a - b, lambda a, b: a ** b, lambda a, b: a / b, lambda a, b: a // b, lambda a, b: a % b,
        lambda a, b: a < b, fnp.multiply, fnp.add]


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint8, np.complex64, bool])
def test_direct_staging_with_scalars_on_either_side(dtype, monkeypatch):
    x = np.array([1, 2, 3]).astype(dtype)
    fns = [lambda v, f=f, s=s: (f(v, s), f(s, v)) for f in _OPS for s in _SCALARS]
    fns += [lambda v: (abs(v), -v if dtype is not bool else ~v, v[0] * v, v * v[:, None])]
    fast = [_jaxpr_and_value(f, x) for f in fns]
    with monkeypatch.context() as m:
        off = types.SimpleNamespace(dynamic=None)  # no direct path anywhere
        for mod, name in ((staged, "_st"), (staging, "TRACE_STATE"), (lax_api, "_TS")):
            m.setattr(mod, name, off)
        general = [_jaxpr_and_value(f, x) for f in fns]
    assert fast == general
    if dtype is np.int8:  # x_int8 + 1000 raises as NumPy 2 does (both paths)
        assert any(r[0] == "OverflowError" for r in fast)


def test_array_layout_cannot_change_in_place():
    # funcgrad computes on an Array's plain base: an in-place reshape would be left behind
    # (``add(x, x)`` of a 2x3 Array was 1-d, on the native entry and the general path)
    x = fnp.sin(np.arange(6.0))
    for name, value in (("shape", (2, 3)), ("strides", (8,)), ("dtype", np.int64)):
        with pytest.raises(AttributeError, match=f"Array.{name}"):
            setattr(x, name, value)
    assert fnp.add(x, x).shape == (6,)
    assert x.view(np.int32).shape == (12,) and x.reshape(2, 3).shape == (2, 3)
    v = x[1:]  # (a view of an Array is computed on as it is: its layout may change)
    v.shape = (1, 5)
    np.testing.assert_array_equal(fnp.add(v, v), 2 * np.sin(np.arange(1.0, 6.0))[None])


@pytest.mark.parametrize("native", [False, True])
def test_eager_fast_errors_are_the_general_paths(native):
    # a real-only ufunc on complex input gave NumPy's bare "ufunc 'arctan2' not supported"
    # TypeError; a wrong call named ``binary.<locals>.fast``
    from funcgrad.numpy_api import eager_native

    if native and not eager_native.enable():
        pytest.skip("no native eager entry in this process")
    eager_native.enable(native)
    try:
        z, r = np.ones(3, np.complex128), np.ones(3)
        for _ in range(3):
            for call in (lambda: fnp.arctan2(r, z), lambda: fnp.copysign(z, z), lambda: fnp.cbrt(z)):
                with pytest.raises(TypeError, match=r"^(arctan2|copysign|cbrt): not supported for complex input"):
                    call()
            with pytest.raises(TypeError, match=r"^add\(\) takes 2 positional"):
                fnp.add(r, r, r)
            with pytest.raises(TypeError, match=r"^sin\(\) takes 1 positional"):
                fnp.sin(r, r)
    finally:
        eager_native.enable(True)


def test_python_float_out_of_range_of_float32_is_silent(recwarn):
    # the memoised scalar constant warned "overflow encountered in cast" on its first use
    # only (eagerly and under jit, on both staging paths): funcgrad's operations are silent
    import warnings

    x = np.ones(2, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(fnp.add(x, -3.5e299), [-np.inf, -np.inf])
        np.testing.assert_array_equal(fg.jit(lambda v: v * 2.5e301)(x), [np.inf, np.inf])
