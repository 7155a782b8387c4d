"""The dtypes funcgrad supports and NumPy-2 promotion with weak Python scalars.

Supported: bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32,
float64, complex64, complex128 (kind "c"; Python ``complex`` is weak like ``float``:
``float32_array * 1j`` is complex64, ``int32_array + 1j`` complex128).
float64 is the default float and int64 the default int. Integers wrap around
(modulo 2**n) like NumPy's and C's; a further integer width is one row in ``_TABLE`` (the
lowering derives register types, signedness and widths from kind and itemsize). Python
scalars are *weak*: they take the dtype of the array they meet (NEP 50), which is what
``weak_type`` on an aval records.

``result_type`` is the one place that decides a promoted dtype. By default it applies
NumPy 2's table; with ``config.update("funcgrad_promotion", "jax")`` (``FUNCGRAD_PROMOTION=jax``,
``funcgrad.promotion_rules("jax")``) it applies JAX's type-promotion lattice as JAX has it
with ``jax_enable_x64`` (``_JAX_LATTICE``): an integer with float32 is float32, an integer with
complex64 complex64. Weak Python scalars promote alike under both.
"""
from __future__ import annotations

import numpy as np

from funcgrad import config
from funcgrad.errors import UnsupportedDtypeError

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

# (dtype, short name in the printed IR). One row per supported dtype: NumPy does the
# promotion, the lowering derives its register types from kind and itemsize.
_TABLE = (
    (bool_, "bool"), (int8, "i8"), (int16, "i16"), (int32, "i32"), (int64, "i64"),
    (uint8, "u8"), (uint16, "u16"), (uint32, "u32"), (uint64, "u64"), (float32, "f32"),
    (float64, "f64"), (complex64, "c64"), (complex128, "c128"),
)
SUPPORTED = tuple(dt for dt, _ in _TABLE)
_SUPPORTED_SET = frozenset(SUPPORTED)
SUPPORTED_TEXT = ", ".join(dt.name for dt in SUPPORTED)

default_float = float64

# JAX's ``float0``: the dtype of a tangent or cotangent of an integer or boolean value (zero
# bytes per element). It is not a dtype funcgrad computes in; ``grad(..., allow_int=True)``
# returns arrays of it for integer arguments.
float0 = np.dtype([("float0", np.void, 0)])

SHORT_NAMES = dict(_TABLE)

# A representative Python scalar per dtype kind, used to ask NumPy for NEP-50 promotion
# of weakly typed values: np.result_type(np.float32, 0.0) -> float32, (uint32, 0) -> uint32.
_WEAK_STANDIN = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def is_integer(dt) -> bool:
    """Signed or unsigned integer dtype (not bool)."""
    return np.dtype(dt).kind in "iu"


def is_unsigned(dt) -> bool:
    return np.dtype(dt).kind == "u"


class NarrowType(type):
    """The class of JAX's narrow scalar types that funcgrad names but does not compute in
    (``bfloat16``, the ``float8_*``/``float6_*``/``float4_*`` formats, ``int4``/``int2``/
    ``int1`` and their unsigned twins; they come from the ``ml_dtypes`` package, not a
    dependency). Calling one or using it as a dtype (``numpy.dtype(t)``, ``dtype=t``,
    ``x.astype(t)``) raises ``UnsupportedDtypeError`` naming it."""

    def error(cls) -> UnsupportedDtypeError:
        return UnsupportedDtypeError(
            f"{cls.__name__} ({cls.what}) is not a dtype funcgrad supports: it computes in {SUPPORTED_TEXT}. "
            f"Use {'int8 or uint8' if 'int' in cls.__name__ else 'float32 or float64'} instead.")

    @property
    def dtype(cls):  # NumPy reads ``.dtype`` of an object used as a dtype: the error reaches the user
        raise cls.error()

    def __call__(cls, *args, **kwargs):
        raise cls.error()

    def __repr__(cls):
        return f"funcgrad.numpy.{cls.__name__}"


def _narrow(name: str, what: str) -> NarrowType:
    doc = (f"JAX's ``{name}`` ({what}). funcgrad does not compute in it: calling it or using it as a "
           "dtype raises ``UnsupportedDtypeError`` naming it.")
    return NarrowType(name, (), {"__doc__": doc, "what": what, "__module__": "funcgrad.numpy"})


_FLOAT8 = "an 8-bit float"
NARROW_TYPES = {t.__name__: t for t in (
    _narrow("bfloat16", "the 16-bit brain float"),
    *(_narrow(f"float8_{fmt}", _FLOAT8) for fmt in (
        "e3m4", "e4m3", "e4m3b11fnuz", "e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e8m0fnu")),
    _narrow("float6_e2m3fn", "a 6-bit float"), _narrow("float6_e3m2fn", "a 6-bit float"),
    _narrow("float4_e2m1fn", "a 4-bit float"),
    *(_narrow(f"{sign}int{bits}", f"a {bits}-bit {'unsigned ' if sign else ''}integer")
      for sign in ("", "u") for bits in (1, 2, 4)),
)}


def canonicalize(dtype, *, what: str = "value") -> np.dtype:
    """Return ``dtype`` as a supported ``np.dtype`` or raise ``UnsupportedDtypeError``.
    A supported dtype of the other byte order (``>f8`` on a little-endian machine) is
    its native twin: funcgrad computes in native order (as NumPy's results are), and
    takes such data converted (``native``)."""
    try:
        dt = np.dtype(dtype)
    except UnsupportedDtypeError as e:  # a NarrowType names itself
        raise UnsupportedDtypeError(f"{what}: {e}") from None
    except TypeError as e:
        raise UnsupportedDtypeError(f"{what}: {dtype!r} is not a dtype funcgrad understands") from e
    if dt in _SUPPORTED_SET:
        return dt
    if not dt.isnative and dt.newbyteorder("=") in _SUPPORTED_SET:
        return dt.newbyteorder("=")
    raise UnsupportedDtypeError(
        f"{what} has dtype {dt.name}, which funcgrad does not support. Supported dtypes: "
        f"{SUPPORTED_TEXT}. Convert first, e.g. x.astype(numpy.float64)."
    )


def native(x):
    """``x`` (an ndarray or NumPy scalar) in native byte order: converted (a new array)
    when it is not, as NumPy converts such data for arithmetic."""
    dt = x.dtype
    return x if dt.isnative else x.astype(dt.newbyteorder("="))


def is_complex(dt) -> bool:
    return np.dtype(dt).kind == "c"


def is_inexact(dt) -> bool:
    """Floating-point or complex: the dtypes that carry derivatives."""
    return np.dtype(dt).kind in "fc"


def real_dtype(dt) -> np.dtype:
    """The real dtype of a complex one's parts (complex64 -> float32); others unchanged."""
    dt = np.dtype(dt)
    return {complex64: float32, complex128: float64}.get(dt, dt)


def complex_dtype(dt) -> np.dtype:
    """The complex dtype with parts of real dtype ``dt`` (float32 -> complex64; other
    kinds by NumPy's promotion with a weak ``1j``: int32 -> complex128)."""
    dt = np.dtype(dt)
    if dt.kind == "c":
        return dt
    return complex64 if dt == float32 else complex128


def float_loop_dtype(dt) -> np.dtype:
    """The dtype NumPy's float ufunc loops (``sin``, ``sqrt``, ``arctan2``...) compute an
    operand of promoted dtype ``dt`` in: floats stay, int16/uint16 become float32, int32/
    int64/uint32/uint64 float64. Where NumPy picks float16 (bool, int8, uint8), funcgrad,
    which has no float16, picks float64."""
    dt = np.dtype(dt)
    if dt.kind in "fc":
        return dt
    return float32 if dt.kind in "iu" and dt.itemsize == 2 else float64


def python_scalar_dtype(x) -> np.dtype:
    """dtype a Python scalar gets on its own (bool, int64, float64, complex128)."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return int64
    if isinstance(x, float):
        return float64
    if isinstance(x, complex):
        return complex128
    raise TypeError(f"{type(x).__name__} is not a Python scalar")


def result_type(*dtypes_and_weak: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Promotion of (dtype, weak_type) pairs -> (dtype, weak_type), by the current rules.

    NumPy 2's (the default): strong operands promote by NumPy's table; weak operands
    (Python scalars) only raise the *kind* (bool < int < float < complex), never the
    precision. JAX's (``funcgrad_promotion="jax"``): the join in JAX's lattice
    (``jax_join``). The result is weak only if every operand is weak, under both.
    """
    strong = [dt for dt, weak in dtypes_and_weak if not weak]
    weak = [dt for dt, weak in dtypes_and_weak if weak]
    if not strong:
        dt = np.result_type(*weak) if len(weak) > 1 else weak[0]
        return np.dtype(dt), True
    if _jax_rules[0]:
        dt = jax_join(dtypes_and_weak)
        if dt is not None:
            return dt, False
    standins = [_WEAK_STANDIN[dt.kind] for dt in weak]
    return np.dtype(np.result_type(*strong, *standins)), False


# --- JAX's type-promotion lattice (``funcgrad_promotion="jax"``) ----------------------------
# JAX's ``_type_promotion_lattice`` ("standard") restricted to funcgrad's dtypes, with its
# weak types: ``i*``/``f*``/``c*`` stand for a weak int, float, complex (a Python scalar),
# which become int64/float64/complex128 when they are the join (as with jax_enable_x64). An
# edge a -> b says b is above a; the result dtype of operands is their least upper bound.
# What differs from NumPy's table: no integer reaches float64 except through ``f*`` (so any
# integer with float32 is float32, with complex64 complex64); uint64 with a signed integer
# is ``f*`` (float64) in both. A weak bool is bool: bool is the bottom anyway.
_jax_rules = config.JAX_PROMOTION
_WEAK_I, _WEAK_F, _WEAK_C = "i*", "f*", "c*"
_JAX_LATTICE = {
    bool_: (_WEAK_I,), _WEAK_I: (uint8, int8),
    uint8: (int16, uint16), uint16: (int32, uint32), uint32: (int64, uint64), uint64: (_WEAK_F,),
    int8: (int16,), int16: (int32,), int32: (int64,), int64: (_WEAK_F,),
    _WEAK_F: (float32, _WEAK_C), float32: (float64, complex64), float64: (complex128,),
    _WEAK_C: (complex64,), complex64: (complex128,), complex128: (),
}
_WEAK_NODE = {"b": bool_, "i": _WEAK_I, "u": _WEAK_I, "f": _WEAK_F, "c": _WEAK_C}
_WEAK_DTYPE = {_WEAK_I: int64, _WEAK_F: float64, _WEAK_C: complex128}


def _upper_sets() -> dict:
    """Each lattice node's set of nodes at or above it (walked from the top down)."""
    up: dict = {}
    for node in reversed(list(_JAX_LATTICE)):  # (the table lists each node before those above it)
        up[node] = frozenset((node,)).union(*(up[b] for b in _JAX_LATTICE[node]))
    return up


def _join_table() -> dict:
    up = _upper_sets()
    table = {}
    for a in _JAX_LATTICE:
        for b in _JAX_LATTICE:
            common = up[a] & up[b]
            least = [c for c in common if up[c] >= common]
            table[a, b] = least[0]  # (a lattice: exactly one)
    return table


_JOIN = _join_table()


def promote(*dts) -> np.dtype:
    """The result dtype of strong operands of dtypes ``dts`` by the current rules
    (``numpy.result_type`` of the dtypes, or the join in JAX's lattice)."""
    if _jax_rules[0]:
        dt = jax_join([(np.dtype(d), False) for d in dts])
        if dt is not None:
            return dt
    return np.result_type(*dts)


def jax_join(dtypes_and_weak) -> np.dtype | None:
    """The dtype JAX's lattice gives (dtype, weak_type) operands (with jax_enable_x64), or
    None when one is not a funcgrad dtype."""
    node = None
    for dt, weak in dtypes_and_weak:
        n = _WEAK_NODE[dt.kind] if weak else dt
        if n not in _JAX_LATTICE:
            return None
        node = n if node is None else _JOIN[node, n]
    return _WEAK_DTYPE.get(node, node)


def float_to_int(x: np.ndarray, dtype) -> np.ndarray:
    """``x`` (real floats) cast to the integer ``dtype`` by funcgrad's one rule, on every
    path (``convert_element_type``, ``x.astype``, compiled code): truncate toward zero,
    saturate at the integer range, NaN -> 0. NumPy's own cast is undefined there (C's
    rule) and gives platform values (``INT_MIN`` on x86-64 for NaN, wrapped bytes)."""
    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        big = x >= float(info.max) + 1.0  # (iinfo.max is not a float: compare, don't clip, at the top)
        y = np.where(np.isnan(x) | big, 0, np.clip(x, info.min, info.max))
        out = np.trunc(y).astype(dtype)
        return np.where(big, info.max, out).astype(dtype)
