"""The eager fast path of funcgrad.numpy: plain inputs, nothing tracing -> NumPy directly.

With no staging trace active (``make_jaxpr``, ``jit``, a control-flow body: see
``core/trace.py``) and only plain inputs (``numpy.ndarray``, funcgrad's ``Array``
values, NumPy scalars, Python scalars; never a tracer, so no transform can claim the
operation), a ``funcgrad.numpy`` function gives exactly what its general path gives,
which promotes, broadcasts and ``bind``s one primitive whose eager impl is a NumPy
ufunc. The fast functions here skip that machinery:

- the dtype decision is made once per (function, input dtypes / Python-scalar types)
  by funcgrad's own promotion (``_util``; NumPy 2 rules, Python scalars weak) and
  cached as a *plan*: the NumPy function (the primitive's impl) and, per operand, the
  conversion the general path would make (``astype`` to the promoted dtype; a Python
  scalar as the same memoised 0-d constant);
- broadcasting is left to the NumPy function (same rules, same results: the general
  path's explicit broadcasts are the views NumPy makes internally);
- the result is frozen into a value as ``bind`` does (read-only ``Array``, fresh
  memory, 0-d ``Array``s for the NumPy scalars of 0-d ufunc results), under the same silenced
  floating-point error state.

Anything else -- a tracer, a staging trace, an unsupported dtype, a plan that would
need another primitive (``add`` of bools is ``bitwise_or``), shapes that do not
broadcast (the general path raises funcgrad's error), an ``out=`` -- goes to the
general function, unchanged. ``tests/test_eager_fast_path.py`` checks both paths agree.
"""
from __future__ import annotations

import numpy as np

from funcgrad import config
from funcgrad.core import dtypes
from funcgrad.core.array import Array, fresh_value
from funcgrad.core.fp_errors import restore, silence
from funcgrad.core.primitive import impl_rules
from funcgrad.core.prims import elementwise as _ew
from funcgrad.core.trace import STAGING, TRACE_STATE
from funcgrad.numpy_api import _util, eager_native

_nd = np.ndarray
_generic = np.generic
_st = TRACE_STATE  # thread-local; ``.dynamic`` is the staging trace, None when eager
_staging = STAGING  # staging traces in all threads: while 0, ``_st`` need not be read
_ARRAYS = frozenset((np.ndarray, Array))
_PY = {float: dtypes.float64, int: dtypes.int64, bool: dtypes.bool_}
_SUPPORTED = _util._SUPPORTED
_BOOL = dtypes.bool_


def _plain(x):
    """The plain ndarray behind an ``Array`` (as ``bind`` unwraps it)."""
    b = x.base
    return b if type(b) is _nd else x.view(_nd)


def _converter(key, dtype):
    """What the general path does to an operand of ``key`` (a dtype, or a Python scalar
    type) promoted to ``dtype``: None (nothing) or a one-argument function."""
    if key in _PY:
        return lambda v: _util._scalar_constant(v, dtype)  # (weak: takes the result dtype)
    if key != dtype:
        return lambda v: v.astype(dtype)
    return None


def _promoted(keys, inexact):
    """The general path's dtype: ``inexact`` is False (``promote_args``), "loop" (NumPy's
    float loops, ``promote_args_float_loop``) or "float64" (``promote_args_inexact``)."""
    sigs = [(_PY[k], True) if k in _PY else (k, False) for k in keys]
    if any(not w and d not in _SUPPORTED for d, w in sigs):
        return None
    if config.DTYPE_PROMOTION[0] == "strict" and len({d for d, w in sigs if not w}) > 1:
        return None  # the general path raises TypePromotionError
    dtype = dtypes.result_type(*sigs)[0]
    if inexact == "loop":
        dtype = dtypes.float_loop_dtype(dtype)
    elif inexact and dtype.kind not in "fc":
        dtype = dtypes.default_float
    return dtype


# Every fast form's caches, emptied when funcgrad.numpy's promotion rules change
# (``jax_numpy_rank_promotion`` / ``jax_numpy_dtype_promotion``): plan dicts, the
# last-call caches and the native entries' plans.
_CACHES: list = []


def reset_plans() -> None:
    """Forget every cached plan (the next calls decide again under the current rules)."""
    for plans, last, cfg in _CACHES:
        plans.clear()
        last[:] = [None, None, None]
        cfg[2] = None


config.PROMOTION_HOOKS.append(reset_plans)


def _plan(keys, inexact, choose):
    """(ufunc, converters, native plan) for operands of ``keys``, or False (take the
    general path). The native plan (``eager_native``: the ufunc and the dtypes) is None
    unless every operand is an array needing no conversion."""
    if config.RANK_PROMOTION[0] != "allow":  # the general path checks each call's ranks
        return False
    dtype = _promoted(keys, inexact)
    fn = None if dtype is None else choose(dtype)
    if fn is None:
        return False
    convs = [_converter(k, dtype) for k in keys]
    native = None if any(c is not None for c in convs) or not isinstance(fn, np.ufunc) else (fn, *keys)
    return fn, convs, native


def _freeze(out):
    if type(out) is _nd:  # (ufuncs and np.dot give fresh arrays, or NumPy scalars for 0-d)
        out.setflags(False)
        return out.view(Array)
    return fresh_value(out)


def _key_of(x):
    """(plain operand, plan key) of an eager operand, or (None, None) if it is not one."""
    t = type(x)
    if t is _nd:
        return x, x.dtype
    if t is Array:
        return _plain(x), x.dtype
    if t in _PY:
        return x, t
    if isinstance(x, _generic):
        return x, x.dtype
    return None, None


def unary(slow, inexact, choose):
    """The fast form of the one-operand function ``slow``. ``choose(dtype)`` is the NumPy
    function the general path ends in for the promoted ``dtype`` (or None)."""
    plans: dict = {}
    cfg = [None, eager_native.flags(True), None]
    _CACHES.append((plans, [None, None, None], cfg))

    def fast(x, /):
        if _st.dynamic is None:
            t = type(x)
            if t is _nd:
                a, k = x, x.dtype
            elif t is Array:
                b = x.base
                a, k = (b if type(b) is _nd else x.view(_nd)), x.dtype
            else:
                a, k = _key_of(x)
            if k is not None:
                plan = plans.get(k)
                if plan is None:
                    plan = plans[k] = _plan((k,), inexact, choose)
                if plan:
                    fn, (c,), native = plan
                    if native is not None:
                        cfg[2] = native
                    try:
                        if c is not None:
                            a = c(a)
                    except (OverflowError, TypeError, ValueError):
                        return slow(x)
                    token = silence()
                    try:
                        out = fn(a)
                    except TypeError:  # no loop for the dtype (cbrt of complex): funcgrad's error
                        return slow(x)
                    finally:
                        restore(token)
                    if type(out) is _nd:
                        out.setflags(False)
                        return out.view(Array)
                    return fresh_value(out)  # a NumPy scalar (0-d operands) as a 0-d value
        return slow(x)

    fast.cfg = cfg
    return fast


def binary(slow, inexact, choose):
    """The fast form of the two-operand function ``slow`` (see ``unary``)."""
    plans: dict = {}
    last = [None, None, None]  # (dtypes are interned: an identity check is a hit)
    cfg = [None, eager_native.flags(True), None]
    _CACHES.append((plans, last, cfg))

    def fast(x1, x2, /):
        if _st.dynamic is None:
            t = type(x1)
            if t is _nd:
                a, k1 = x1, x1.dtype
            elif t is Array:
                b = x1.base
                a, k1 = (b if type(b) is _nd else x1.view(_nd)), x1.dtype
            else:
                a, k1 = _key_of(x1)
            t = type(x2)
            if t is _nd:
                b, k2 = x2, x2.dtype
            elif t is Array:
                b = x2.base
                b, k2 = (b if type(b) is _nd else x2.view(_nd)), x2.dtype
            else:
                b, k2 = _key_of(x2)
            if k1 is not None and k2 is not None:
                if k1 is last[0] and k2 is last[1]:  # (the same dtypes as the last call)
                    plan = last[2]
                else:
                    key = (k1, k2)
                    plan = plans.get(key)
                    if plan is None:
                        plan = plans[key] = _plan(key, inexact, choose)
                    last[:] = [k1, k2, plan]
                if plan:
                    fn, (c1, c2), native = plan
                    if native is not None:
                        cfg[2] = native
                    try:
                        if c1 is not None:
                            a = c1(a)
                        if c2 is not None:
                            b = c2(b)
                    except (OverflowError, TypeError, ValueError):
                        return slow(x1, x2)
                    token = silence()
                    try:
                        out = fn(a, b)
                    except (TypeError, ValueError):  # shapes that do not broadcast, no loop for
                        return slow(x1, x2)  # the dtype (arctan2 of complex): funcgrad's error
                    finally:
                        restore(token)
                    if type(out) is _nd:
                        out.setflags(False)
                        return out.view(Array)
                    return fresh_value(out)  # a NumPy scalar (0-d operands) as a 0-d value
        return slow(x1, x2)

    fast.cfg = cfg
    return fast


def where(slow):
    """``where(condition, x, y)`` with a bool array condition: ``numpy.where`` (the
    ``select_n`` impl) after the general path's promotion of ``x`` and ``y``."""
    plans: dict = {}
    np_where = np.where
    cfg = [None, eager_native.flags(False), None]
    _CACHES.append((plans, [None, None, None], cfg))

    def fast(condition, x=None, y=None, /, **kwargs):
        if kwargs:  # (size=/fill_value= of the one-argument form)
            return slow(condition, x, y, **kwargs)
        if _st.dynamic is None:
            t = type(condition)
            c = condition if t is _nd else _plain(condition) if t is Array else None
            if c is not None and c.dtype is _BOOL:
                a, k1 = _key_of(x)
                b, k2 = _key_of(y)
                if k1 is not None and k2 is not None:
                    key = (k1, k2)
                    plan = plans.get(key)
                    if plan is None:
                        plan = plans[key] = _plan(key, False, lambda d: np_where)
                    if plan:
                        _, (c1, c2), native = plan
                        if c1 is None and c2 is None:
                            cfg[2] = (np_where, _BOOL, k1, k2)
                        try:
                            if c1 is not None:
                                a = c1(a)
                            if c2 is not None:
                                b = c2(b)
                            out = np_where(c, a, b)  # (selects: no floating-point errors)
                        except (OverflowError, TypeError, ValueError):
                            return slow(condition, x, y)
                        out.setflags(False)  # (always an ndarray: 0-d for 0-d operands)
                        return out.view(Array)
        return slow(condition, x, y)

    fast.cfg = cfg
    return fast


_DOT_DTYPES = frozenset(d for d in _SUPPORTED if d != _BOOL)


# ``numpy.dot`` clears a matrix product's output before BLAS writes it (~0.6 us for
# 100x100 float64); ``numpy.matmul`` makes the same BLAS call (gemm, same arguments, so
# the same bits: ``tests/test_eager_native_calls.py``) without that when both operands
# are aligned C-contiguous matrices with every dimension in [2, 2^31) (with a dimension
# 1 it takes another loop: slower, and -0.0 may differ), but has ~0.2 us more fixed
# cost: it is taken from this many output elements, for the dtypes where the fill is
# the larger (ints do not use BLAS).
GEMM_MIN = 4096
_GEMM_DTYPES = frozenset(map(np.dtype, (np.float64, np.complex64, np.complex128)))


def _gemm(x, y) -> bool:
    """Whether ``numpy.matmul`` gives ``numpy.dot(x, y)`` faster (see ``GEMM_MIN``)."""
    if x.ndim != 2 or y.ndim != 2:
        return False
    (m, k), n = x.shape, y.shape[1]
    return m * n >= GEMM_MIN and 2 <= min(m, k, n) and max(m, k, n) < 2**31 and x.flags.c_contiguous \
        and y.flags.c_contiguous and x.flags.aligned and y.flags.aligned


def matmul(slow):
    """``matmul`` of 1-d/2-d arrays of one non-bool dtype: ``numpy.dot``, which is what
    the general path's ``dot_general`` impl calls for these shapes (``numpy.matmul`` for
    big C-contiguous matrices, ``GEMM_MIN``, and where an operand has one element,
    ``dot.blas_dot``)."""
    np_dot, np_matmul = np.dot, np.matmul
    # (cfg[3]: the native entry's function for big matrices of the plan's dtype)
    cfg = [None, eager_native.flags(True, 1, 2, gemm_min=GEMM_MIN), None, np_dot]

    def fast(a, b, **keywords):  # (JAX's precision=/preferred_element_type=: the general path)
        if _st.dynamic is None and not keywords:
            t = type(a)
            x = a if t is _nd else _plain(a) if t is Array else None
            t = type(b)
            y = b if t is _nd else _plain(b) if t is Array else None
            if x is not None and y is not None:
                d = x.dtype
                if d is y.dtype and d in _DOT_DTYPES and 0 < x.ndim <= 2 and 0 < y.ndim <= 2:
                    if x.shape[-1] == y.shape[0]:  # (else the general path's error)
                        plan = cfg[2]
                        if plan is None or plan[1] is not d:
                            cfg[3] = np_matmul if d in _GEMM_DTYPES else np_dot
                            cfg[2] = (np_dot, d, d)
                        # (an operand of one element: ``numpy.dot`` would skip its products
                        # with a 0 there, ``blas_dot``; the native entry leaves it to us)
                        fn = np_matmul if x.size == 1 or y.size == 1 or d in _GEMM_DTYPES and _gemm(x, y) \
                            else np_dot
                        token = silence()
                        try:
                            out = fn(x, y)
                        finally:
                            restore(token)
                        return _freeze(out)
        return slow(a, b, **keywords)

    fast.cfg = cfg
    return fast


def concatenate(slow):
    """``concatenate`` of a list/tuple of arrays of one dtype along an int axis:
    ``numpy.concatenate`` (the ``concatenate`` impl); no ``out``/``dtype``/``casting``."""
    np_concatenate = np.concatenate
    # (the native entry takes ``concatenate(seq)`` of ndarrays of the last such call's dtype)
    cfg = [None, eager_native.flags(False, 1, 64, seq=True), None]

    def fast(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
        # (ranks are NumPy's to check: its ValueError sends the call to the general path)
        if out is None and dtype is None and type(axis) is int and casting == "same_kind" \
                and (type(arrays) is list or type(arrays) is tuple) and arrays \
                and (not _staging[0] or _st.dynamic is None):
            d = arrays[0].dtype if type(arrays[0]) in _ARRAYS else None
            plain = arrays
            if d in _SUPPORTED:
                for i, x in enumerate(arrays):
                    t = type(x)
                    if t is Array:
                        if plain is arrays:
                            plain = list(arrays)
                        plain[i] = _plain(x)
                    elif t is not _nd:
                        break
                    if x.dtype is not d:
                        break
                else:
                    try:
                        out = np_concatenate(plain, axis)
                    except ValueError:  # (AxisError too) the general path's error
                        return slow(arrays, axis, None, dtype=dtype, casting=casting)
                    if plain is arrays and axis == 0:
                        cfg[2] = (np_concatenate, d)
                    out.setflags(False)
                    return out.view(Array)  # (never 0-d: NumPy refuses 0-d operands)
        return slow(arrays, axis, out, dtype=dtype, casting=casting)

    fast.cfg = cfg
    return fast


# --- which functions have a fast form ---------------------------------------------------

def _ufunc_of(prim):
    impl = impl_rules[prim]
    if not isinstance(impl, np.ufunc):  # pragma: no cover - guards a changed impl
        raise TypeError(f"eager fast path: {prim} is not a NumPy ufunc")
    return impl


def _always(prim):
    fn = _ufunc_of(prim)
    return lambda d: fn


def _no_bool(prim):
    fn = _ufunc_of(prim)
    return lambda d: None if d == _BOOL else fn


def _float_div(d):  # the ``div`` impl on floats (integer division never reaches here)
    return np.true_divide if d.kind == "f" else None


# name -> (arity, inexact, chooser). Only functions that are exactly one primitive after
# promotion (see elementwise.py); add/multiply of bools are other primitives.
_UNARY_FLOAT = {
    "exp": _ew.exp_p, "expm1": _ew.expm1_p, "log": _ew.log_p, "log1p": _ew.log1p_p, "sqrt": _ew.sqrt_p,
    "cbrt": _ew.cbrt_p, "sin": _ew.sin_p, "cos": _ew.cos_p, "tan": _ew.tan_p, "arcsin": _ew.asin_p,
    "arccos": _ew.acos_p, "arctan": _ew.atan_p, "sinh": _ew.sinh_p, "cosh": _ew.cosh_p, "tanh": _ew.tanh_p,
    "arcsinh": _ew.asinh_p, "arccosh": _ew.acosh_p, "arctanh": _ew.atanh_p, "rint": _ew.round_p,
    "log2": _ew.log2_p, "log10": _ew.log10_p,
}
_BINARY = {
    "add": (False, _no_bool(_ew.add_p)), "multiply": (False, _no_bool(_ew.mul_p)),
    "subtract": (False, _no_bool(_ew.sub_p)), "maximum": (False, _always(_ew.max_p)),
    "minimum": (False, _always(_ew.min_p)), "equal": (False, _always(_ew.eq_p)),
    "not_equal": (False, _always(_ew.ne_p)), "less": (False, _always(_ew.lt_p)),
    "less_equal": (False, _always(_ew.le_p)), "greater": (False, _always(_ew.gt_p)),
    "greater_equal": (False, _always(_ew.ge_p)), "divide": ("float64", _float_div),
    "true_divide": ("float64", _float_div), "arctan2": ("loop", _always(_ew.atan2_p)),
    "copysign": ("loop", _always(_ew.copysign_p)),
}
_SPECIAL = {"where": where, "matmul": matmul, "concatenate": concatenate}


def fast_form(name: str, slow):
    """The fast form of the public function ``name`` (whose general form is ``slow``),
    or None if it has none."""
    if name in _UNARY_FLOAT:
        return unary(slow, "loop", _always(_UNARY_FLOAT[name]))
    if name in _BINARY:
        inexact, choose = _BINARY[name]
        return binary(slow, inexact, choose)
    if name in _SPECIAL:
        return _SPECIAL[name](slow)
    return None


def install(package, modules) -> None:
    """Replace each public function that has a fast form, in ``package`` and in the
    ``modules`` that define it (after ``methods.wrap_public``: the general form is the
    values-boundary wrapper). The fast function looks like the general one (name,
    docstring, signature via ``__wrapped__``)."""
    import functools

    for module in modules:
        for name in module.__all__:
            slow = getattr(module, name, None)
            if slow is None or getattr(slow, "eager_fast", False) or not getattr(slow, "values_boundary", False):
                continue
            fast = fast_form(name, slow)
            if fast is None:
                continue
            # (a wrong call's TypeError names the function, as the general one's does)
            fast.__name__, fast.__qualname__ = slow.__name__, slow.__qualname__
            cfg = getattr(fast, "cfg", None)
            if cfg is not None and eager_native.POSSIBLE:
                cfg[0] = fast
                fast = eager_native.EagerFunction(cfg)
            functools.update_wrapper(fast, slow)
            fast.values_boundary = fast.eager_fast = True
            fast.general = slow  # the general path, for tests and tools
            setattr(module, name, fast)
            if getattr(package, name, None) is slow:
                setattr(package, name, fast)


__all__ = ["install", "fast_form"]
