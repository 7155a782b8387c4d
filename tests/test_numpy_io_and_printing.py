"""funcgrad.numpy's file, buffer and printing functions: NumPy's, returning funcgrad values,
and a clear error under a transform."""
import io

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core.array import Array


def test_save_load_round_trip_gives_a_value(tmp_path):
    x = fnp.arange(6.0).reshape(2, 3)
    path = tmp_path / "x.npy"
    fnp.save(path, x)
    y = fnp.load(path)
    assert type(y) is Array and not y.flags.writeable
    np.testing.assert_array_equal(y, x)
    fnp.savez(tmp_path / "xs.npz", x, b=np.ones(2))
    with fnp.load(tmp_path / "xs.npz") as archive:
        np.testing.assert_array_equal(archive["arr_0"], x)
        np.testing.assert_array_equal(archive["b"], 1.0)


def test_readers_match_numpy():
    buf = np.arange(4, dtype=np.int16).tobytes()
    out = fnp.frombuffer(buf, dtype=np.int16, count=3, offset=2)
    np.testing.assert_array_equal(out, np.frombuffer(buf, np.int16, 3, 2))
    assert type(out) is Array
    np.testing.assert_array_equal(fnp.fromiter((i * i for i in range(4)), np.int64), [0, 1, 4, 9])
    s = fnp.fromstring("1.5, 2, 3", sep=",")
    assert s.dtype == np.float64 and list(s) == [1.5, 2.0, 3.0]
    f = io.BytesIO()
    np.save(f, np.arange(3))
    f.seek(0)
    np.testing.assert_array_equal(fnp.load(f), [0, 1, 2])
    np.testing.assert_array_equal(fnp.from_dlpack(np.arange(3.0)), [0.0, 1.0, 2.0])


def test_printing():
    x = np.array([1 / 3, 2.0])
    assert fnp.array_str(x) == np.array_str(x)
    assert fnp.array_repr(np.asarray(x)) == np.array_repr(x)
    with fnp.printoptions(precision=2):
        assert fnp.array_str(x) == "[0.33 2.  ]"
        assert fnp.get_printoptions()["precision"] == 2


def test_under_a_transform_is_a_typed_error():
    with pytest.raises(TypeError, match="array_str: got a traced value"):
        fg.jit(fnp.array_str)(np.ones(2))
    with pytest.raises(TypeError, match="save: got a traced value"):
        fg.jit(lambda x: fnp.save(io.BytesIO(), x))(np.ones(2))
