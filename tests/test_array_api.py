"""funcgrad.numpy as the Python array API standard's namespace (2024.12): the entry
points the standard adds (``__array_namespace__``, ``__array_namespace_info__``,
``device=``, ``descending=``, ``finfo``/``iinfo`` on arrays, DLPack of read-only values)
and the dtype rules it shares with NumPy. The public ``array-api-tests`` suite is run by
the command in docs/guide/array-api.md; these are the points it found."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def test_namespace_of_values_and_tracers():
    x = fnp.arange(3.0)
    assert x.__array_namespace__() is fnp
    assert x.__array_namespace__(api_version="2023.12") is fnp
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="1999.01")
    seen = []
    fg.jit(lambda t: seen.append(t.__array_namespace__()) or t)(np.ones(2))
    assert seen == [fnp]
    assert fnp.__array_api_version__ == "2024.12"


def test_namespace_info():
    info = fnp.__array_namespace_info__()
    assert info.default_device() == "cpu" and info.devices() == ["cpu"]
    assert info.default_dtypes() == {"real floating": np.float64, "complex floating": np.complex128,
                                     "integral": np.int64, "indexing": np.int64}
    assert set(info.dtypes(kind="unsigned integer")) == {"uint8", "uint16", "uint32", "uint64"}
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64", "complex128"}
    assert "float32" in info.dtypes() and "float16" not in info.dtypes()
    assert info.capabilities()["max dimensions"] == 64
    with pytest.raises(ValueError, match="unknown kind 'reals'"):
        info.dtypes(kind="reals")
    with pytest.raises(ValueError, match="CPU only"):
        info.dtypes(device="gpu")


@pytest.mark.parametrize("make", [
    lambda d: fnp.zeros(3, device=d), lambda d: fnp.ones((2,), device=d), lambda d: fnp.empty(2, device=d),
    lambda d: fnp.full(2, 1.0, device=d), lambda d: fnp.arange(3, device=d), lambda d: fnp.eye(2, device=d),
    lambda d: fnp.linspace(0, 1, 3, device=d), lambda d: fnp.asarray([1.0], device=d),
    lambda d: fnp.zeros_like(np.ones(2), device=d), lambda d: fnp.full_like(np.ones(2), 3, device=d),
])
def test_creation_device_keyword(make):
    a, b = make("cpu"), make(fg.devices()[0])
    np.testing.assert_array_equal(a, b)
    assert a.device == "cpu"
    with pytest.raises(ValueError, match="CPU only"):
        make("gpu")


def test_sort_descending_is_stable_with_nans_first():
    x = np.array([[1.0, 2.0, 2.0, 3.0, np.nan], [5.0, 4.0, 4.0, np.nan, 0.0]])
    want_vals = np.flip(np.sort(x, axis=-1), axis=-1)
    want_idx = np.array([[4, 3, 1, 2, 0], [3, 0, 1, 2, 4]])
    for f, g in ((fnp.sort, fnp.argsort), (fg.jit(fnp.sort, static_argnames="descending"),
                                           fg.jit(fnp.argsort, static_argnames="descending"))):
        np.testing.assert_array_equal(f(x, descending=True), want_vals)
        np.testing.assert_array_equal(g(x, descending=True), want_idx)
    assert fnp.argsort(np.zeros((2, 0)), descending=True).shape == (2, 0)


def test_clip_array_api_signature():
    x = np.array([-2.0, 0.0, 2.0])
    np.testing.assert_array_equal(fnp.clip(x, -1.0, 1.0), [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(fnp.clip(x, max=1.0), [-2.0, 0.0, 1.0])


def test_lists_from_broadcast_arrays_and_meshgrid():
    out = fg.jit(lambda a, b: fnp.meshgrid(a, b))(np.arange(2.0), np.arange(3.0))
    assert isinstance(out, list) and [o.shape for o in out] == [(3, 2), (3, 2)]
    assert isinstance(fnp.broadcast_arrays(np.ones(3), 1.0), list)


@pytest.mark.parametrize("dt", [np.uint8, np.int8, np.bool_, np.float32, np.complex64])
def test_vecdot_keeps_the_dtype(dt):
    a, b = (np.arange(6) % 3).astype(dt).reshape(2, 3), np.ones(3, dt)
    for f in (fnp.vecdot, fnp.linalg.vecdot, fg.jit(fnp.vecdot)):
        r = f(a, b)
        assert r.dtype == np.vecdot(a, b).dtype
        np.testing.assert_array_equal(r, np.vecdot(a, b))


@pytest.mark.parametrize("dt", [np.uint8, np.uint32, np.int8, np.bool_])
def test_trace_accumulates_unsigned_in_uint64(dt):
    x = np.ones((2, 2), dt)
    for f in (fnp.trace, fg.jit(fnp.trace), fnp.linalg.trace):
        assert f(x).dtype == np.trace(x).dtype
        assert f(x) == np.trace(x)


def test_finfo_iinfo_take_arrays_and_give_python_numbers():
    fi = fnp.finfo(fnp.ones(2, np.float32))
    assert fi.bits == 32 and type(fi.eps) is float and fi.eps == np.finfo(np.float32).eps
    assert type(fnp.finfo(np.complex64).max) is float and fnp.finfo(np.complex64).dtype == np.float32
    assert fnp.finfo(np.float64).nmant == 52  # NumPy's other fields pass through
    ii = fnp.iinfo(fnp.ones(2, np.uint8))
    assert (ii.bits, ii.min, ii.max) == (8, 0, 255) and type(ii.max) is int
    seen = []
    fg.jit(lambda t: seen.append(fnp.finfo(t).eps) or t)(np.float32(1))
    assert seen == [float(np.finfo(np.float32).eps)]
    with pytest.raises(ValueError, match="finfo"):
        fnp.finfo(np.int8)
    with pytest.raises(ValueError, match="iinfo"):
        fnp.iinfo(np.float64)


def test_nextafter_keeps_the_sign_of_zero():
    a, b = np.array([0.0, -0.0, 0.0, 1.0]), np.array([-0.0, 0.0, 0.0, 2.0])
    for f in (fnp.nextafter, fg.jit(fnp.nextafter)):
        r = f(a, b)
        np.testing.assert_array_equal(np.signbit(r), np.signbit(np.nextafter(a, b)))
        np.testing.assert_array_equal(r, np.nextafter(a, b))


def test_dlpack_of_a_read_only_value():
    x = fnp.arange(3.0)
    np.testing.assert_array_equal(np.from_dlpack(x), [0.0, 1.0, 2.0])  # a legacy consumer: a copy
    shared = np.from_dlpack(x, copy=False)  # DLPack 1.0 carries the read-only flag: no copy
    assert not shared.flags.writeable and np.shares_memory(shared, x)
    np.testing.assert_array_equal(fnp.from_dlpack(x), x)
