"""Abstract values: what a transform knows about an array (shape, dtype, weakness)."""
from __future__ import annotations

import numbers

import numpy as np

from funcgrad.core import dtypes


class ShapedArray:
    """Static shape + dtype (+ weak_type for values that came from Python scalars).

    The weak-type rule, one for eager, staged and compiled code: a weak value stands for a
    Python scalar (a Python scalar passed to ``jit``/``make_jaxpr``), and only Python's
    operators on Python scalars give one (``convert_element_type(weak_type=True)``, from
    ``numpy_api/methods.py``). Every other primitive's result is strong, structural ones
    (``reshape``, ``broadcast_in_dim``, ``select_n``, ...) included, because eagerly a
    primitive applied to a Python scalar gives a NumPy array or scalar, which is strong:
    ``fnp.repeat(s, 2) + float32`` is float64 eagerly, so staged too (JAX's structural
    ops keep weak types; funcgrad's cannot, eager values being NumPy's). A
    ``funcgrad.numpy`` function that returns an argument as it is makes it strong at its
    boundary (``methods._strong``).

    Printed in short form: ``f64[3,4]``, ``i64[]``, ``bool[5]``.
    """

    __slots__ = ("shape", "dtype", "weak_type", "_hash")
    array_abstraction_level = 1

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = None

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def strip_weak_type(self) -> "ShapedArray":
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def str_short(self) -> str:
        return f"{dtypes.SHORT_NAMES.get(self.dtype, self.dtype.name)}[{','.join(map(str, self.shape))}]"

    def same_type(self, other: "ShapedArray") -> bool:
        """Shape and dtype equal (weak_type is a promotion hint, not part of the type)."""
        return self.shape == other.shape and self.dtype == other.dtype

    def __eq__(self, other):
        return (
            isinstance(other, ShapedArray)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self):
        h = self._hash
        if h is None:  # avals are immutable: hash once (they key the tracing caches)
            h = self._hash = hash((self.shape, self.dtype, self.weak_type))
        return h

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    __str__ = str_short


def is_python_scalar(x) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


_AVAL_CACHE: dict = {}
_PY_SCALAR_AVALS = {
    bool: ShapedArray((), dtypes.bool_, True),
    int: ShapedArray((), dtypes.int64, True),
    float: ShapedArray((), dtypes.float64, True),
    complex: ShapedArray((), dtypes.complex128, True),
}


def get_aval(x) -> ShapedArray:
    """Aval of a concrete value (ndarray, NumPy scalar or Python scalar) or a tracer."""
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    if isinstance(x, (np.ndarray, np.generic)):
        key = (x.shape, x.dtype)
        aval = _AVAL_CACHE.get(key)
        if aval is None:  # avals are immutable, so one object per (shape, dtype) serves all
            aval = ShapedArray(x.shape, dtypes.canonicalize(x.dtype, what="array"), False)
            if len(_AVAL_CACHE) > 10_000:
                _AVAL_CACHE.clear()
            _AVAL_CACHE[key] = aval
        return aval
    if is_python_scalar(x):
        return (
            _PY_SCALAR_AVALS[type(x)]
            if type(x) in _PY_SCALAR_AVALS
            else ShapedArray((), dtypes.python_scalar_dtype(x), True)
        )
    if isinstance(x, numbers.Number):
        raise dtypes.UnsupportedDtypeError(f"{type(x).__name__} values are not supported by funcgrad")
    raise TypeError(
        f"value of type {type(x).__name__} is not a valid funcgrad array: expected a "
        "numpy.ndarray, a NumPy scalar, a Python bool/int/float, or a traced array"
    )


