"""Abstract values: what a transform knows about an array (shape, dtype, weakness)."""
from __future__ import annotations

import numbers

import numpy as np

from funcgrad.core import dtypes


class ShapedArray:
    """Static shape + dtype (+ weak_type for values that came from Python scalars).

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
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


_AVAL_CACHE: dict = {}
_PY_SCALAR_AVALS = {
    bool: ShapedArray((), dtypes.bool_, True),
    int: ShapedArray((), dtypes.int64, True),
    float: ShapedArray((), dtypes.float64, True),
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
        return _PY_SCALAR_AVALS[type(x)] if type(x) in _PY_SCALAR_AVALS else ShapedArray((), dtypes.python_scalar_dtype(x), True)
    if isinstance(x, numbers.Number):
        raise dtypes.UnsupportedDtypeError(f"{type(x).__name__} values are not supported by funcgrad")
    raise TypeError(
        f"value of type {type(x).__name__} is not a valid funcgrad array: expected a "
        "numpy.ndarray, a NumPy scalar, a Python bool/int/float, or a traced array"
    )


class TapeAval(ShapedArray):
    """Type of a run-time tape: per-iteration residuals of a loop whose trip count is
    only known when it runs (reverse mode through ``while_loop``). ``res_avals`` are the
    residuals' types per iteration; ``batch`` is the vmap size when the residuals carry a
    leading batch axis and each record ends with a per-lane "still running" mask (else
    None). Under nested vmaps ``inner`` lists the sizes of the inner batch levels
    (innermost first): each level adds its axis to every field and appends its mask."""

    __slots__ = ("res_avals", "batch", "inner")

    def __init__(self, res_avals, batch=None, shape=(), inner=()):
        # ``shape`` is non-empty for a stack of tapes (one per iteration of an enclosing
        # scan); indexing its leading axis gives the per-iteration tape.
        super().__init__(shape, np.dtype(object), False)
        self.res_avals = tuple(res_avals)
        self.batch = batch
        self.inner = tuple(inner)

    def str_short(self) -> str:
        inner = ",".join(a.str_short() for a in self.res_avals)
        dims = f"<{','.join(map(str, self.shape))}>" if self.shape else ""
        if self.batch is None:
            return f"tape{dims}[{inner}]"
        levels = ",".join(map(str, self.inner + (self.batch,)))
        return f"tape{dims}{{batch={levels}}}[{inner}]"

    __str__ = str_short

    def update(self, shape=None, dtype=None, weak_type=None):
        return TapeAval(self.res_avals, self.batch, self.shape if shape is None else shape, self.inner)

    @property
    def n_masks(self) -> int:
        """Lane masks at the end of each record: one per batch level."""
        return (self.batch is not None) + len(self.inner)

    @property
    def fields(self) -> tuple:
        """The residuals without the lane masks."""
        return self.res_avals[:len(self.res_avals) - self.n_masks]

    def with_fields(self, fields) -> "TapeAval":
        """A tape of the same batching and stacking with other residuals (the masks, if
        any, stay last)."""
        masks = self.res_avals[len(self.res_avals) - self.n_masks:]
        return TapeAval(tuple(fields) + masks, self.batch, self.shape, self.inner)

    def same_type(self, other) -> bool:
        return (isinstance(other, TapeAval) and self.res_avals == other.res_avals
                and self.batch == other.batch and self.shape == other.shape and self.inner == other.inner)

    def __eq__(self, other):
        return self.same_type(other)

    def __hash__(self):
        return hash((self.res_avals, self.batch, self.shape, self.inner))

    def strip_weak_type(self):
        return self

    def unbatched(self) -> "TapeAval":
        """The per-example view of a batched tape (drop this level's axis and mask)."""
        if self.batch is None:
            return self
        return TapeAval([a.unbatched() if isinstance(a, TapeAval) else ShapedArray(a.shape[1:], a.dtype)
                         for a in self.res_avals[:-1]], self.inner[-1] if self.inner else None, self.shape,
                        self.inner[:-1])

    def __repr__(self):
        return f"TapeAval({self.str_short()})"
