"""``funcgrad.numpy``'s dtype names: NumPy's scalar-type hierarchy, and the narrow floats and
integers (float16, bfloat16, float8_*, int4, ...), which are named but not computed in: each
raises ``UnsupportedDtypeError`` naming the type wherever a dtype is taken."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import UnsupportedDtypeError

NARROW = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
          "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
          "int1", "int2", "int4", "uint1", "uint2", "uint4"]


def test_numpy_type_hierarchy_names():
    assert fnp.generic is np.generic and fnp.character is np.character and fnp.flexible is np.flexible
    assert fnp.object_ is np.object_ and fnp.newaxis is None
    assert issubclass(fnp.float32, fnp.generic) and issubclass(np.str_, fnp.character)
    assert fnp.ComplexWarning is np.exceptions.ComplexWarning
    with pytest.warns(fnp.ComplexWarning):
        fnp.asarray(np.array([1 + 2j])).astype(np.int64)


@pytest.mark.parametrize("name", NARROW)
def test_narrow_types_raise_naming_the_type(name):
    t = getattr(fnp, name)
    assert t.__name__ == name and name in t.__doc__
    attempts = [lambda: fnp.zeros(3, t), lambda: fnp.asarray([1.0], dtype=t), lambda: fnp.ones(2).astype(t),
                lambda: t(1.0), lambda: np.dtype(t), lambda: fg.jit(lambda x: x.astype(t))(np.ones(2)),
                lambda: fnp.sum(np.ones(2), dtype=t)]
    for attempt in attempts:
        with pytest.raises(UnsupportedDtypeError, match=name):
            attempt()
    assert isinstance(UnsupportedDtypeError(), TypeError)


def test_float16_raises_naming_it():
    assert fnp.float16 is np.float16
    for attempt in (lambda: fnp.zeros(2, fnp.float16), lambda: fnp.sin(np.ones(2, np.float16)),
                    lambda: fnp.ones(2).astype(np.float16), lambda: fg.grad(fnp.sum)(np.ones(2, np.float16))):
        with pytest.raises(UnsupportedDtypeError, match="float16"):
            attempt()
