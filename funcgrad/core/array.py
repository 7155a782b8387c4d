"""Eager results as values: ``Array``, a thin read-only ``numpy.ndarray`` subclass.

An eager funcgrad result is a NumPy array (``isinstance(x, numpy.ndarray)``, zero-copy
interop with NumPy, SciPy, matplotlib) that behaves like a ``jax.Array`` value:

- it is read-only, and its memory is funcgrad's: a result that would alias memory the
  user can still write (a view of, or the very array passed in) is copied, while views
  of funcgrad's own read-only results stay zero-copy views (``as_value``);
- it carries ``x.at[idx].set(v)`` (and the other ``.at`` methods),
  ``x.block_until_ready()`` and, when it is closed over by a transform or a ``lax``
  loop body, indexing by a traced value (``table[i]``), which is staged like
  ``funcgrad.numpy`` indexing;
- operators on it give values too, as on a ``jax.Array`` (``(a * b).at[i]``; ``x += 1``
  rebinds ``x``), with funcgrad's promotion (under ``funcgrad_promotion="jax"``, operands
  of two dtypes are converted to the dtype JAX's lattice gives them first); NumPy
  functions on it (``numpy.sin(x)``, ``x.sum(0)``, ``x.copy()``) give plain, writeable
  ``ndarray``s, which belong to the user.

0-d results are 0-d ``Array``s too, as in JAX (NumPy would return NumPy scalars): one
type for every result of an eager call, a transform and a ``jit`` call, with
``block_until_ready``, ``item``, ``float(x)``, ``f"{x:.3f}"`` and comparisons; unhashable,
as a ``jax.Array``. Scalar indexing of a value (``x[0]``) gives a 0-d value as well;
iterating a 1-d value gives NumPy scalars, as iterating a NumPy array does.
The wrapping happens once per primitive on the eager ``bind`` path
(``core/trace.py``), and at the boundary of each public ``funcgrad.numpy`` function,
``jit`` call and eager ``grad`` call (for results that did not come from ``bind``).
Inside ``bind`` an ``Array`` argument is unwrapped to its plain base first
(``unwrap``), so NumPy never sees the subclass on the hot path.
"""
from __future__ import annotations

import numpy as np

from funcgrad import config
from funcgrad.core import dtypes, pytree
from funcgrad.core.dtypes import float_to_int
from funcgrad.errors import ImmutableArrayError

_ndarray = np.ndarray
_generic = np.generic
_asarray = np.asarray
_getitem = np.ndarray.__getitem__

# The ufuncs behind Python's binary operators (``s * x`` with a NumPy scalar ``s``).
_OPERATOR_UFUNCS = frozenset([
    np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.remainder, np.power, np.matmul,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift,
    np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
])

# Installed by funcgrad.numpy_api.methods (core cannot import it): staged indexing with
# a traced index, and the ``.at`` helper.
hooks: dict = {}


class Array(np.ndarray):
    """A read-only eager funcgrad result. See the module docstring."""

    __slots__ = ()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # ``np.float64(2) * x`` reaches here, not ``x.__rmul__``: NumPy scalars do not
        # defer to ndarray subclasses. An operator between a NumPy scalar and a value
        # gives a value, as with the operands swapped (NumPy cannot tell
        # ``np.multiply(s, x)`` from ``s * x``: both give values). Every other NumPy call
        # gives plain arrays, as ``__array_wrap__`` does. (Array operators call NumPy on
        # plain arrays and never come here.)
        if kwargs:
            out = kwargs.get("out")
            if out:
                for o in out:
                    if type(o) is Array and not o.flags.writeable:
                        _immutable(f"numpy.{ufunc.__name__}(..., out=x)", f"x = funcgrad.numpy.{ufunc.__name__}(...)")
                kwargs["out"] = tuple(unwrap(o) if type(o) is Array else o for o in out)
        elif method == "__call__" and len(inputs) == 2 and type(inputs[1]) is Array \
                and isinstance(inputs[0], np.generic) and ufunc in _OPERATOR_UFUNCS:
            s, plain = inputs[0], unwrap(inputs[1])
            if _jax_rules[0]:
                s, plain = _jax_promoted(s, plain)
            return fresh_value(ufunc(s, plain))
        return getattr(ufunc, method)(*[unwrap(x) if type(x) is Array else x for x in inputs], **kwargs)

    def __setattr__(self, name, value):
        # A value is immutable, as a JAX array: its layout too. funcgrad computes on the
        # plain base of an Array that has one (``unwrap``), which an in-place ``shape``/
        # ``strides``/``dtype`` change would leave behind (``x.shape = (2, 3)`` then
        # ``add(x, x)`` was 1-d). (A view of an Array, whose base is that Array, may:
        # ``x.view(dtype)`` sets its new view's dtype.)
        if name in ("shape", "strides", "dtype") and type(self.base) is _ndarray:
            raise AttributeError(f"Array.{name} cannot be set: funcgrad values are immutable; "
                                 f"use reshape/astype/view, which return a new value")
        super().__setattr__(name, value)

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        # NumPy's own operations on an Array give the user a plain array.
        if return_scalar:
            return arr[()]
        return arr if type(arr) is _ndarray else arr.view(_ndarray)

    def __getitem__(self, idx):
        if _has_tracer(idx):
            return hooks["getitem"](self, idx)
        out = _getitem(self, idx)
        if type(out) is Array:
            # The fresh copy an advanced index of a value makes is a value too. (A writeable
            # Array NumPy made, np.empty_like(x), stays NumPy's: its views are written.)
            if out.base is not self and out.flags.writeable and not self.flags.writeable:  # (a view: skip)
                out.setflags(False)
            return out
        return fresh_value(out)  # a NumPy scalar (an integer index) as a 0-d value

    def __iter__(self):
        # Iteration is NumPy's protocol (``list(x)``, ``set(x)``, ``for v in x``, what
        # NumPy-facing code does): a 1-d value gives NumPy scalars, as a NumPy array does,
        # hashable and cheap; rows of an n-d one are values (``__getitem__``).
        if self.ndim == 1:
            return iter(unwrap(self))
        if not self.ndim:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    # Values are immutable, as jax.Array: what would write into one raises funcgrad's
    # TypeError with the fix (NumPy's bare "assignment destination is read-only" names
    # none). Arrays NumPy made writeable (``np.zeros_like(x)``) stay NumPy's.
    def __setitem__(self, idx, value):
        if not self.flags.writeable:
            _immutable("x[idx] = y", "x = x.at[idx].set(y) (or .add, .multiply, .min, .max, ...)")
        _ndarray.__setitem__(self, idx, value)

    def fill(self, value):
        if not self.flags.writeable:
            _immutable("x.fill(v)", "x = funcgrad.numpy.full_like(x, v)")
        _ndarray.fill(self, value)

    def sort(self, axis=-1, kind=None, order=None, **kwargs):
        if not self.flags.writeable:
            _immutable("x.sort()", "x = funcgrad.numpy.sort(x)")
        _ndarray.sort(self, axis, kind, order, **kwargs)

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        if not self.flags.writeable:
            _immutable("x.partition(k)", "x = funcgrad.numpy.partition(x, k)")
        _ndarray.partition(self, kth, axis, kind, order)

    def put(self, indices, values, mode="raise"):
        if not self.flags.writeable:
            _immutable("x.put(idx, v)", "x = x.at[idx].set(v) on the flattened x")
        _ndarray.put(self, indices, values, mode)

    def resize(self, *shape, refcheck=True):
        if not self.flags.writeable:
            _immutable("x.resize(shape)", "x = funcgrad.numpy.resize(x, shape)")
        _ndarray.resize(self, *shape, refcheck=refcheck)

    def setflags(self, write=None, align=None, uic=None):
        if write and not self.flags.writeable and self.base is not None:  # (not an array NumPy made)
            _immutable("x.setflags(write=True)")
        _ndarray.setflags(self, write, align, uic)

    @property
    def at(self):
        """Functional index updates, as on ``jax.Array``: ``x.at[idx].set(v)``, ``add``,
        ``multiply``, ``divide``, ``power``, ``min``, ``max``, ``apply``, ``get``."""
        return hooks["at"](self)

    def block_until_ready(self):
        """Eager results are always ready (JAX's asynchronous-dispatch API)."""
        return self

    def __array_namespace__(self, *, api_version=None):
        """The Python array API namespace of funcgrad's values: ``funcgrad.numpy``
        (standard 2024.12; ``api_version`` may name it or an earlier one)."""
        return hooks["namespace"](api_version)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # A read-only buffer can only be shared under DLPack >= 1.0, which has a read-only
        # flag; an older consumer gets a copy, unless it asked for none (``copy=False``).
        try:
            return _ndarray.__dlpack__(unwrap(self), stream=stream, max_version=max_version,
                                       dl_device=dl_device, copy=copy)
        except BufferError:
            if copy is False or self.flags.writeable:
                raise
            return _ndarray.__dlpack__(np.array(self, copy=True), stream=stream, max_version=max_version,
                                       dl_device=dl_device, copy=None)

    def copy(self, order="C"):
        """A plain, writeable NumPy copy (it belongs to the caller)."""
        return np.array(self, order=order, copy=True)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """Like ``numpy.ndarray.astype``, but float -> integer follows funcgrad's rule, as
        ``fnp.astype`` and compiled code do (truncate, saturate at the integer range,
        NaN -> 0; NumPy gives platform values there); the result is a (read-only) value.
        Floats narrower than float32 raise ``UnsupportedDtypeError``, as every function does."""
        dtype = np.dtype(dtype)
        if dtype.kind == "f" and dtype.itemsize < 4:
            dtypes.canonicalize(dtype, what="astype dtype")
        if not copy and dtype == self.dtype:
            return self
        base = unwrap(self)
        if self.dtype.kind in "fc" and dtype.kind in "iu" and casting == "unsafe":
            if self.dtype.kind == "c":
                import warnings  # (NumPy's warning for the discarded imaginary part)

                warnings.warn("Casting complex values to real discards the imaginary part",
                              np.exceptions.ComplexWarning, stacklevel=2)
                base = base.real
            out = float_to_int(base, dtype)
            return fresh_value(out if order in ("K", "A", "C") else np.asarray(out, order=order))
        return fresh_value(_ndarray.astype(base, dtype, order=order, casting=casting))

    def __reduce_ex__(self, protocol):
        return (from_pickle, (np.array(self, copy=True),))


def _operator(name):
    """``x <op> y`` on a value gives a value, as on a ``jax.Array`` (``(a * b).at[i]`` works);
    NumPy computes it. Anything else (a traced operand) is left to NumPy's dispatch."""
    base = getattr(_ndarray, name)

    def method(self, *other):
        # On the plain arrays: NumPy then skips ``Array.__array_ufunc__`` (a costly hook).
        if other and type(other[0]) is Array:
            other = (unwrap(other[0]),)
        plain = unwrap(self)
        if _jax_rules[0] and other:  # (JAX's promotion: funcgrad's, not NumPy's, decides the dtype)
            plain, o = _jax_promoted(plain, other[0])
            other = (o,)
        try:
            if plain.ndim or (other and type(other[0]) not in _SCALAR_TYPES and not isinstance(other[0], _generic)):
                return fresh_value(base(plain, *other))
            # A 0-d value and a scalar (``loss * 0.5``): NumPy's scalar math, with the same
            # promotion and values as on 0-d arrays and several times faster.
            return fresh_value(getattr(plain[()], name)(*other))
        except OverflowError:  # a Python int beyond the dtype: NumPy 2's message, named
            if other and type(other[0]) is int:
                raise OverflowError(f"Array.{name}: Python integer {other[0]} out of bounds for {self.dtype}") from None
            raise

    method.__name__ = name
    return method


def _jax_promoted(x, y):
    """``x`` and ``y`` converted to the dtype JAX's lattice gives them, when both are NumPy
    arrays or scalars of funcgrad dtypes that differ (``funcgrad_promotion="jax"``). Python
    scalars are weak, which NumPy's promotion already gets right."""
    if isinstance(y, (_ndarray, _generic)) and y.dtype != x.dtype:
        dt = dtypes.jax_join(((x.dtype, False), (y.dtype, False)))
        if dt is not None:
            return (x if x.dtype == dt else x.astype(dt)), (y if y.dtype == dt else y.astype(dt))
    return x, y


_jax_rules = config.JAX_PROMOTION
_SCALAR_TYPES = frozenset((int, float, bool, complex))
_OPERATORS = [f"__{n}__" for n in (
    "add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv",
    "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "and", "rand", "or", "ror", "xor", "rxor",
    "lshift", "rlshift", "rshift", "rrshift", "lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "abs", "invert",
)]
for _name in _OPERATORS:
    setattr(Array, _name, _operator(_name))
# Values are immutable: ``x += 1`` rebinds ``x`` to a new value, as with jax.Array.
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
              "rshift"):
    setattr(Array, f"__i{_name}__", getattr(Array, f"__{_name}__"))


def _immutable(what: str, fix: str = ""):
    raise ImmutableArrayError(
        f"{what}: funcgrad arrays are immutable (read-only) values, like jax.Array, and cannot be "
        f"changed in place; {f'use {fix} for a new value, or ' if fix else 'use '}numpy.array(x) for a "
        "writeable NumPy copy")


def _has_tracer(idx) -> bool:
    t = type(idx)
    if t is int or t is slice:
        return False
    is_tracer = hooks["is_tracer"]
    if t is tuple or t is list:
        for e in idx:
            if is_tracer(e) or (type(e) in (tuple, list) and any(is_tracer(v) for v in e)):
                return True
        return False
    return is_tracer(idx)


def from_pickle(arr: np.ndarray):
    """Unpickle an ``Array`` (pickled as a plain copy of its data) as a value again."""
    return fresh_value(arr)


def unwrap(a: Array) -> np.ndarray:
    """The plain ndarray behind an ``Array``, for NumPy code on the hot path. An Array
    made by ``plain.view(Array)`` has ``plain`` as its base (NumPy stops collapsing the
    base chain at a change of type), with the same layout; any other Array (a slice of
    one, a NumPy-made copy) is viewed as a plain array."""
    b = a.base
    return b if type(b) is _ndarray else a.view(_ndarray)


def scalar_value(s):
    """A NumPy scalar as a value: a 0-d read-only ``Array``."""
    out = _asarray(s)
    out.setflags(False)
    return out.view(Array)


def fresh_value(out):
    """``out``, a plain ndarray that only funcgrad refers to (or a NumPy scalar), frozen
    as a value."""
    if type(out) is not _ndarray:
        return scalar_value(out) if isinstance(out, _generic) else out
    out.setflags(False)
    return out.view(Array)


def as_value(out, inputs=(), scratch=True):
    """``out`` (a plain ndarray computed from the plain ndarrays ``inputs``) as a value:
    read-only, never aliasing memory the user can write (then a copy), an ``Array``.
    A NumPy scalar becomes a 0-d ``Array``; anything else that is not a plain ndarray
    is returned as it is. A view of
    other writeable memory is the computation's scratch, frozen in place, when
    ``scratch`` (``inputs`` are all the memory the computation saw); else copied."""
    if type(out) is not _ndarray:
        return scalar_value(out) if isinstance(out, _generic) else out
    if out.base is None:
        for a in inputs:
            if out is a:
                break
        else:  # a fresh result
            out.setflags(False)
            return out.view(Array)
    return _shared_value(out, inputs, scratch)


def _shared_value(out, inputs, scratch=True):
    """``as_value`` for a view, or an input returned as it is."""
    b = out.base
    owner = out if b is None else b
    if not isinstance(owner, _ndarray):  # memory of a non-array object (bytes, mmap, ...)
        out = np.array(out, copy=True)
    elif out.flags.writeable or owner.flags.writeable:  # someone may write this memory
        if not scratch or _belongs_to(out, owner, inputs):
            out = _copy(out, owner)  # the user's: copy it
        else:  # scratch memory of the computation: freeze it
            owner.setflags(False)
    out.setflags(False)
    return out.view(Array)


def _copy(out, owner):
    """A copy of ``out`` with its layout: a view larger than its owner (a broadcast)
    stays a view, of a copy of the owner; anything else is copied in its stride order.
    Same layouts give the same results downstream (NumPy's summation order follows
    the memory layout)."""
    if out.size > owner.size and owner.base is None and (owner.flags.c_contiguous or owner.flags.f_contiguous):
        if owner.size == 1 and out.dtype == owner.dtype:  # a broadcast scalar
            data = np.array(owner, copy=True).reshape(())
            data.setflags(False)
            return np.broadcast_to(data, out.shape)
        data = np.array(owner, order="A", copy=True)
        data.setflags(False)
        offset = out.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        return _ndarray(out.shape, out.dtype, buffer=data, offset=offset, strides=out.strides)
    return np.array(out, order="K", copy=True)


def _belongs_to(out, owner, inputs) -> bool:
    for a in inputs:
        if out is a or owner is a or (isinstance(a, _ndarray) and owner is a.base):
            return True
    return False


def as_values(outs, inputs=()):
    """``as_value`` of each element of a list/tuple of results (pytree leaves)."""
    return [as_value(o, inputs) for o in outs]


def copied_value(out):
    """``out``, of unknown origin (it may be an array the user still holds), as a value:
    a copy unless it is one already."""
    t = type(out)
    if t is Array and not out.flags.writeable:
        return out
    if t is _ndarray or t is Array:
        b = out.base
        if not out.flags.writeable and (b is None or isinstance(b, _ndarray) and not b.flags.writeable):
            return out.view(Array) if t is _ndarray else out
        return fresh_value(np.array(out, copy=True))
    if isinstance(out, _generic):
        return scalar_value(out)
    return out


def leaf_values(leaves) -> list:
    """``copied_value`` of each leaf: the outputs of a public transform (``vmap``,
    ``jvp``, ``vjp``, ...) evaluated eagerly, which may be the caller's own arrays
    passed through unchanged (``vmap(lambda x: x)(buf)``). Tracers pass as they are."""
    return [copied_value(x) for x in leaves]


def values_caller(call, consts=()):
    """``call`` (a compiled program: arguments -> list of fresh outputs) returning values;
    an output that is an argument or a constant (the interpreter fallback) is copied."""
    consts = tuple(c for c in consts if isinstance(c, _ndarray))

    def call_values(*args):
        outs = call(*args)
        inputs = args + consts if consts else args
        return [as_value(o, inputs, scratch=False) for o in outs]

    return call_values


def fresh_caller(call):
    """``call`` (native compiled code, whose outputs are always freshly allocated arrays)
    returning values: no aliasing check is needed, only freezing."""
    def call_values(*args):
        outs = call(*args)
        for o in outs:
            o.setflags(False)
        return [o.view(Array) for o in outs]

    return call_values


def grad_results(out, aux, g_leaves, inputs):
    """The results of an eager ``value_and_grad`` call as values: gradient leaves
    (computed by the reverse pass from ``inputs``) frozen, the output and aux leaves,
    which may be anything the user's function returned, copied unless values already."""
    g_leaves = [as_value(g, inputs, scratch=False) for g in g_leaves]
    if aux is not None:
        aux = pytree.tree_map(copied_value, aux)
    return copied_value(out), aux, g_leaves


__all__ = [
    "Array", "as_value", "as_values", "copied_value", "fresh_value", "scalar_value", "unwrap", "from_pickle", "hooks",
    "values_caller", "fresh_caller", "grad_results", "leaf_values",
]
