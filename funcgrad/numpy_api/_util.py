"""Shared helpers for funcgrad.numpy: argument checking, NumPy-2 dtype promotion and
broadcasting. Every public function promotes and broadcasts here, then calls
primitives (through ``funcgrad.core.lax_api``), which are strict.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from funcgrad import config
from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.core.array import Array
from funcgrad.core.avals import ShapedArray, get_aval, is_python_scalar
from funcgrad.core.fp_errors import restore, silence
from funcgrad.core.trace import Tracer, dynamic_payload, is_eager
from funcgrad.errors import TypePromotionError

AxisError = np.exceptions.AxisError


def is_tracer(x) -> bool:
    return isinstance(x, Tracer)


def is_arraylike(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic, Tracer)) or is_python_scalar(x)


def check_device(fname, device):
    """Creation functions take the array API's ``device=``: funcgrad computes on the CPU."""
    if device is not None and device != "cpu" and getattr(device, "platform", None) != "cpu":
        raise ValueError(f"{fname}: funcgrad runs on the CPU only, got device={device!r}")


def check_arraylike(fname: str, *args) -> None:
    """Reject non-array arguments (strings, None, objects) with a clear TypeError."""
    for i, x in enumerate(args):
        if not (is_arraylike(x) or isinstance(x, (list, tuple))):
            raise TypeError(
                f"{fname}: argument {i} of type {type(x).__name__} is not an array "
                "(expected a numpy.ndarray, a scalar, a list/tuple of numbers, or a traced array)"
            )


def asarray(x, dtype=None, fname: str = "asarray"):
    """``x`` as an ndarray or tracer with a supported dtype (optionally cast to ``dtype``).

    Lists/tuples that contain tracers are stacked with primitives; anything else goes
    through ``numpy.asarray``. Unsupported dtypes raise ``UnsupportedDtypeError``.
    """
    if dtype is not None:
        dtype = dtypes.canonicalize(dtype, what=f"{fname} dtype")
    if isinstance(x, Tracer):
        if dtype is not None and x.aval.dtype.kind == "c" and dtype.kind == "b":
            # NumPy's complex -> bool is "nonzero"; lax's cast keeps only the real part
            # (JAX's jnp.astype special-cases it the same way). No ComplexWarning, as NumPy.
            return lax.ne(x, full(x.aval.shape, 0, x.aval.dtype))
        if dtype is not None and x.aval.dtype.kind == "c" and dtype.kind != "c":
            warn_complex_discard(2)
        return x if dtype is None else lax.convert_element_type(x, dtype)
    if isinstance(x, (list, tuple)) and _contains_tracer(x):
        return _stack_nested(x, dtype, fname)
    if isinstance(x, (np.ndarray, np.generic)):
        if type(x) is not np.ndarray and type(x) is not Array and isinstance(x, np.ndarray):
            x = np.asarray(x)  # another ndarray subclass (numpy.matrix, ...): a plain view
        dtypes.canonicalize(x.dtype, what=f"{fname} argument")
        x = dtypes.native(x)  # (``>f8`` data: converted, as NumPy does for arithmetic)
        return x if dtype is None or x.dtype == dtype else _cast_concrete(np.asarray(x), dtype)
    numeric = is_python_scalar(x) or isinstance(x, (list, tuple, numbers.Number))
    if x is None or isinstance(x, (str, bytes)) or not numeric:
        raise TypeError(f"{fname}: cannot convert {type(x).__name__} to an array")
    arr = np.asarray(x)
    if dtype is not None and arr.dtype != dtype:
        arr = _cast_concrete(arr, dtype) if arr.dtype.kind == "f" else np.asarray(x, dtype)
    if arr.dtype == object:
        if type(x) is int:  # (NumPy makes an object array; JAX and NumPy's arithmetic overflow)
            raise OverflowError(f"{fname}: Python integer {x} out of bounds for int64")
        raise TypeError(f"{fname}: ragged or non-numeric sequences cannot become arrays")
    dtypes.canonicalize(arr.dtype, what=f"{fname} argument")
    return arr


def reject_complex(fname: str, *xs) -> None:
    """TypeError for a NumPy function whose ufunc has no complex loop (``floor``, ``hypot``,
    ``signbit``, ...): NumPy raises, and reading only one part would be silently wrong."""
    for x in xs:
        aval = aval_of(x)
        if aval.dtype.kind == "c":
            raise TypeError(f"{fname}: not supported for complex input (got {aval.dtype.name} of shape "
                            f"{aval.shape}); NumPy has no complex loop for it: use fnp.real/fnp.imag/fnp.abs first")


def warn_complex_discard(stacklevel: int = 1) -> None:
    """JAX's (and NumPy's) ComplexWarning for a complex -> real cast, which keeps the real
    part; ``fnp.real`` is the warning-free way."""
    import warnings

    warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                  stacklevel=stacklevel + 2)


def _cast_concrete(arr: np.ndarray, dtype: np.dtype):
    """``arr`` cast to ``dtype`` as compiled code casts it: float -> int maps NaN to 0 and
    clamps +-inf (the ``convert_element_type`` primitive), where NumPy gives platform
    garbage or raises."""
    if arr.dtype.kind == "f" and dtype.kind in "iu":
        return lax.convert_element_type(arr, dtype)
    return np.asarray(arr, dtype)


def _contains_tracer(seq) -> bool:
    stack = [seq]
    while stack:
        s = stack.pop()
        for v in s:
            if isinstance(v, Tracer):
                return True
            if isinstance(v, (list, tuple)):
                stack.append(v)
    return False


def _stack_nested(seq, dtype, fname):
    parts = [_stack_nested(v, None, fname) if isinstance(v, (list, tuple)) else asarray(v, None, fname) for v in seq]
    parts = promote_dtypes(*parts)
    if dtype is not None:
        parts = [lax.convert_element_type(p, dtype) for p in parts]
    shapes = {aval_of(p).shape for p in parts}
    if len(shapes) != 1:
        raise ValueError(f"{fname}: setting an array element with a sequence; inhomogeneous shapes {sorted(shapes)}")
    shape = shapes.pop()
    expanded = [lax.reshape(p, (1,) + shape) for p in parts]
    return lax.concatenate(expanded, 0)


def aval_of(x) -> ShapedArray:
    """Aval of an array-like; Python scalars are weakly typed."""
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, (list, tuple)):
        return get_aval(asarray(x))
    return get_aval(x)


def shape_of(x) -> tuple:
    return aval_of(x).shape


def result_type(*args) -> np.dtype:
    """The dtype of an operation on ``args`` by the current promotion rules (NumPy 2's
    by default; Python scalars weak)."""
    return dtypes.result_type(*[(a.dtype, a.weak_type) for a in map(aval_of, args)])[0]


def _convert(x, dtype):
    if isinstance(x, Tracer):
        # Same dtype: only the weak flag would change, and primitives recompute it.
        return x if x.aval.dtype == dtype else lax.convert_element_type(x, dtype)
    if is_python_scalar(x):
        return _scalar_constant(x, dtype)
    x = asarray(x)
    return x if x.dtype == dtype else x.astype(dtype)


_scalar_constants: dict = {}


def _scalar_constant(x, dtype):
    """A Python scalar as a read-only 0-d array of ``dtype`` (a value: ops may return
    zero-copy views of it, e.g. broadcasts), memoised per (type, value, dtype)."""
    key = (type(x), x, dtype)
    if x == 0 and type(x) is float:  # -0.0 == 0.0 (and hashes alike) but is another value
        key = (float, "zero", math.copysign(1.0, x), dtype)  # (never equal to (float, 1.0, dtype))
    arr = _scalar_constants.get(key) if x == x else None  # (NaN never equals a key)
    if arr is None:
        token = silence()  # (1e300 as float32 is inf: silent, as funcgrad's operations are)
        try:
            arr = np.asarray(x, dtype)  # raises OverflowError like NumPy for out-of-range ints
        except OverflowError:  # (beyond int64 NumPy says "too large to convert to C long")
            raise OverflowError(f"Python integer {x} out of bounds for {dtype}") from None
        finally:
            restore(token)
        arr.setflags(False)
        if x == x:
            if len(_scalar_constants) > 4096:
                _scalar_constants.clear()
            _scalar_constants[key] = arr
    return arr


# --- the promotion fast path -------------------------------------------------------------
# Every funcgrad.numpy call promotes its arguments, so this is the eager hot path: a
# cheap (dtype, weak, shape) signature per argument, memoised dtype promotion and
# memoised broadcast shapes; arrays that already agree pass through untouched.

_SUPPORTED = frozenset(dtypes.SUPPORTED)
_PY_SCALAR_SIG = {float: (dtypes.float64, True), int: (dtypes.int64, True), bool: (dtypes.bool_, True),
                  complex: (dtypes.complex128, True)}


def _signature(x):
    """(dtype, weak, shape) of an array-like, or None if it must go through asarray."""
    t = type(x)
    if t is np.ndarray or t is Array or isinstance(x, np.generic):
        dt = x.dtype
        if dt not in _SUPPORTED:
            if not dt.isnative:
                return None  # (``asarray`` converts it to native byte order)
            dtypes.canonicalize(dt, what="argument")  # raises with a clear message
        return dt, False, x.shape
    if isinstance(x, Tracer):
        a = x.aval
        return a.dtype, a.weak_type, a.shape
    py = _PY_SCALAR_SIG.get(t)
    if py is not None:
        return py[0], py[1], ()
    return None


def _prepare(fname: str, args):
    """Arguments as arrays/tracers/Python scalars plus their signatures."""
    sigs = []
    out = list(args)
    for i, x in enumerate(args):
        sig = _signature(x)
        if sig is None:
            try:
                out[i] = x = asarray(x, fname=fname)
            except TypeError as e:  # name the argument; keep the error's own type
                raise type(e)(f"{fname}: argument {i} of type {type(x).__name__}: {e}") from None
            sig = _signature(x)
        sigs.append(sig)
    return out, sigs


_dtype_cache: dict = {}


def _check_strict(key) -> None:
    """``jax_numpy_dtype_promotion="strict"``: two different strong dtypes do not promote."""
    strong = {dt for dt, weak in key if not weak}
    if len(strong) > 1:
        names = ", ".join(sorted(np.dtype(d).name for d in strong))
        raise TypePromotionError(f"Input dtypes ({names}) have no available implicit dtype promotion path when "
                                 "jax_numpy_dtype_promotion='strict'. Convert explicitly (x.astype(...)) or "
                                 "use funcgrad.numpy_dtype_promotion('standard')")


def _check_rank_promotion(fname, shapes) -> None:
    """``jax_numpy_rank_promotion``: warn about or refuse broadcasting between ranks."""
    ranks = {len(s) for s in shapes if s}
    if len(ranks) < 2:
        return
    shown = " ".join(str(tuple(s)) for s in shapes)
    msg = (f"{fname}: operands could not be combined with shapes {shown} and with the config option "
           f"jax_numpy_rank_promotion='{config.RANK_PROMOTION[0]}': add the leading axes explicitly "
           "(x[None], reshape) or use funcgrad.numpy_rank_promotion('allow')")
    if config.RANK_PROMOTION[0] == "raise":
        raise ValueError(msg)
    warnings.warn(msg, stacklevel=4)


def _forget_promotions() -> None:
    """The promotion rules changed (``funcgrad_promotion``): forget the memoised decisions."""
    _dtype_cache.clear()
    _scalar_plans.clear()


def _promoted_dtype(sigs) -> np.dtype:
    key = tuple([(s[0], s[1]) for s in sigs])
    if config.DTYPE_PROMOTION[0] == "strict":
        _check_strict(key)
    dt = _dtype_cache.get(key)
    if dt is None:
        dt = _dtype_cache[key] = dtypes.result_type(*key)[0]
    return dt


def _convert_all(args, sigs, dtype):
    return [
        a if s[0] == dtype and not (s[1] and not isinstance(a, Tracer)) else _convert(a, dtype)
        for a, s in zip(args, sigs)
    ]


_shape_cache: dict = {}


def _broadcast_all(fname, args, shapes):
    first = shapes[0]
    for s in shapes:
        if s != first:
            break
    else:
        return args
    if config.RANK_PROMOTION[0] != "allow":
        _check_rank_promotion(fname, shapes)
    key = tuple(shapes)
    shape = _shape_cache.get(key)
    if shape is None:
        shape = _shape_cache[key] = broadcast_shapes(fname, *shapes)
    return [a if s == shape else lax.broadcast_to_rank(a, shape) for a, s in zip(args, shapes)]


def _uniform(args):
    """``(dtype, same_shape)`` when every argument is an ndarray, NumPy scalar or tracer
    of one supported, strong (not weak) dtype -- the common case, which needs no dtype
    promotion -- and ``same_shape`` tells whether broadcasting is needed; otherwise
    ``(None, False)``. Checked before the general path because every funcgrad.numpy
    call on the eager autodiff hot path comes here."""
    dtype = shape = None
    same = True
    for x in args:
        t = type(x)
        if t is np.ndarray or t is Array:
            dt, sh = x.dtype, x.shape
        elif isinstance(x, Tracer):  # (before np.generic: tracing asks about tracers most)
            a = x.aval
            if a.weak_type:
                return None, False
            dt, sh = a.dtype, a.shape
        elif isinstance(x, np.generic):
            dt, sh = x.dtype, x.shape
        else:
            return None, False
        if dtype is None:
            dtype, shape = dt, sh
        elif dt != dtype:
            return None, False
        elif sh != shape:
            same = False
    if dtype not in _SUPPORTED:
        return None, False
    return dtype, same


def _uniform_dtype(args, same_shape: bool = True):
    """The dtype of ``_uniform(args)`` (None unless the shapes agree too, if
    ``same_shape``)."""
    dtype, same = _uniform(args)
    return dtype if same or not same_shape else None


def promote_dtypes(*args):
    """Convert all arguments to their common result dtype (``dtypes.result_type``)."""
    if _uniform_dtype(args, same_shape=False) is not None:
        return list(args)  # one strong dtype already
    args, sigs = _prepare("promote_dtypes", args)
    if len(args) == 1:
        a = args[0]
        return [np.asarray(a, sigs[0][0]) if is_python_scalar(a) else a]
    return _convert_all(args, sigs, _promoted_dtype(sigs))


def promote_dtypes_inexact(*args, fname: str = ""):
    """Like promote_dtypes, then ints/bools become float64 (NumPy's float ufunc loops;
    note NumPy would use float16 for bool, which funcgrad does not support)."""
    args, sigs = _prepare(fname or "promote_dtypes_inexact", args)
    dtype = _promoted_dtype(sigs)
    if dtype.kind not in "fc":
        dtype = dtypes.default_float
    return _convert_all(args, sigs, dtype)


def broadcast_shapes(fname: str, *shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        shown = " ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"{fname}: operands could not be broadcast together with shapes {shown}") from None


def broadcast_to(x, shape):
    """Broadcast ``x`` to ``shape`` (NumPy alignment); no-op when already that shape."""
    shape = tuple(shape)
    if aval_of(x).shape == shape:
        return x
    return lax.broadcast_to_rank(x, shape)


def promote_shapes(fname: str, *args):
    return _broadcast_all(fname, list(args), [aval_of(a).shape for a in args])


# --- a traced value and a Python scalar (``y * 0.5``, ``1.0 - y``) ------------------------
# The commonest mixed call while tracing: the general path builds both signatures, promotes,
# converts and broadcasts on every call. The decision depends only on the tracer's aval and
# the scalar's type, so it is made once per (rule, aval, type, position): the tracer's cast
# (if any), the shape the scalar's constant is broadcast to. Keyed by the aval's id (avals
# hash in Python); the plan holds the aval, so the id is not reused while the entry lives.
_NUMERIC, _INEXACT, _FLOAT_LOOP = 0, 1, 2
_scalar_plans: dict = {}


def _rule_dtype(rule: int, sigs) -> np.dtype:
    dtype = _promoted_dtype(sigs)
    if rule == _INEXACT and dtype.kind not in "fc":
        return dtypes.default_float
    if rule == _FLOAT_LOOP:
        return dtypes.float_loop_dtype(dtype)
    return dtype


def _traced_and_scalar(rule: int, a, b):
    """``[a, b]`` promoted and broadcast when one is a tracer and the other a Python
    scalar (exactly what the general path gives), else None."""
    tb = type(b)
    if tb in _PY_SCALAR_SIG and isinstance(a, Tracer):
        t, s, pos = a, b, 1
    elif type(a) in _PY_SCALAR_SIG and isinstance(b, Tracer):
        t, s, pos = b, a, 0
    else:
        return None
    aval = t.aval
    key = (rule, id(aval), type(s), pos)
    plan = _scalar_plans.get(key)
    if plan is None or plan[0] is not aval:
        sig = (aval.dtype, aval.weak_type, aval.shape)
        py = _PY_SCALAR_SIG[type(s)]
        dtype = _rule_dtype(rule, [sig, (py[0], py[1], ())] if pos else [(py[0], py[1], ()), sig])
        if len(_scalar_plans) > 4096:
            _scalar_plans.clear()
        plan = _scalar_plans[key] = (aval, dtype, aval.dtype != dtype, aval.shape)
    _, dtype, cast, shape = plan
    if cast:
        t = lax.convert_element_type(t, dtype)
    c = _scalar_constant(s, dtype)
    if shape:  # (a 0-d constant's dimensions map to none of the result's)
        # staging memoises a constant's broadcast (lax_api.broadcast_in_dim): look there first
        memo = getattr(dynamic_payload(), "const_broadcasts", None)
        hit = memo.get((id(c), shape, ())) if memo is not None else None
        c = hit[1] if hit is not None and hit[0] is c else lax.broadcast_in_dim(c, shape, ())
    return [t, c] if pos else [c, t]


def promote_args(fname: str, *args):
    """Check, promote dtypes and broadcast shapes: ready for a strict primitive."""
    try:
        dtype, same_shape = _uniform(args)
        if dtype is not None:  # nothing to promote
            return args if same_shape else _broadcast_all(fname, args, [x.shape for x in args])
        if len(args) == 2:
            out = _traced_and_scalar(_NUMERIC, *args)
            if out is not None:
                return out
        args, sigs = _prepare(fname, args)
        dtype = _promoted_dtype(sigs) if len(args) > 1 else sigs[0][0]
        return _broadcast_all(fname, _convert_all(args, sigs, dtype), [s[2] for s in sigs])
    except OverflowError as e:  # a Python int out of the array's range: name the function
        raise OverflowError(f"{fname}: {e}") from None


def promote_args_inexact(fname: str, *args):
    try:
        dtype, same_shape = _uniform(args)
        if dtype is not None and dtype.kind in "fc":  # nothing to promote
            return args if same_shape else _broadcast_all(fname, args, [x.shape for x in args])
        if len(args) == 2:
            out = _traced_and_scalar(_INEXACT, *args)
            if out is not None:
                return out
        args, sigs = _prepare(fname, args)
        dtype = _promoted_dtype(sigs)
        if dtype.kind not in "fc":
            dtype = dtypes.default_float
        return _broadcast_all(fname, _convert_all(args, sigs, dtype), [s[2] for s in sigs])
    except OverflowError as e:  # a Python int out of the array's range: name the function
        raise OverflowError(f"{fname}: {e}") from None


def promote_args_float_loop(fname: str, *args):
    """``promote_args_inexact`` with the dtype of NumPy's float ufunc loops
    (``dtypes.float_loop_dtype``: ``np.sin(int16)`` is float32, ``np.divide`` is not one)."""
    try:
        dtype, same_shape = _uniform(args)
        if dtype is not None and dtype.kind in "fc":  # nothing to promote
            return args if same_shape else _broadcast_all(fname, args, [x.shape for x in args])
        if len(args) == 2:
            out = _traced_and_scalar(_FLOAT_LOOP, *args)
            if out is not None:
                return out
        args, sigs = _prepare(fname, args)
        dtype = dtypes.float_loop_dtype(_promoted_dtype(sigs))
        return _broadcast_all(fname, _convert_all(args, sigs, dtype), [s[2] for s in sigs])
    except OverflowError as e:  # a Python int out of the array's range: name the function
        raise OverflowError(f"{fname}: {e}") from None


config.PROMOTION_HOOKS.append(_forget_promotions)
# (numpy_api/staged.py calls the scalar plan directly for these promotion functions)
traced_and_scalar = _traced_and_scalar
SCALAR_RULES = {promote_args: _NUMERIC, promote_args_inexact: _INEXACT, promote_args_float_loop: _FLOAT_LOOP}


def canonicalize_axis(axis, ndim: int, fname: str = "") -> int:
    """A possibly negative axis as 0..ndim-1, or NumPy's AxisError."""
    try:
        axis = int(axis.__index__())
    except AttributeError:
        raise TypeError(f"{fname}: axis must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim, fname or None)
    return axis % ndim if ndim else 0


def canonicalize_axes(axis, ndim: int, fname: str = "") -> tuple:
    """``None`` -> all axes; an int or a sequence -> sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(a, ndim, fname) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{fname}: duplicate value in 'axis'")
        return tuple(sorted(axes))
    return (canonicalize_axis(axis, ndim, fname),)


def full(shape, fill_value, dtype):
    """An array of ``shape`` filled with a scalar; staged as one broadcast under tracing."""
    dtype = dtypes.canonicalize(dtype, what="full dtype")
    shape = tuple(int(d) for d in shape)
    if isinstance(fill_value, Tracer):
        return lax.broadcast_in_dim(lax.convert_element_type(fill_value, dtype), shape, ())
    if is_eager():
        return np.full(shape, fill_value, dtype)
    return lax.broadcast_in_dim(np.asarray(fill_value, dtype), shape, ())


def zeros_like_aval(aval: ShapedArray):
    return full(aval.shape, 0, aval.dtype)
