"""Top-level names JAX users call that are not transforms: ``eval_shape`` and
``ShapeDtypeStruct``, ``block_until_ready``, ``device_put`` / ``device_get``,
``devices`` / ``default_backend``, ``named_call``.

funcgrad runs on the host CPU only, so the device functions are (almost) identities:
``device_put`` returns funcgrad values (read-only arrays that alias nothing you can
write, like ``funcgrad.numpy.asarray``), ``device_get`` returns NumPy arrays, and
``devices()`` lists the one CPU device. Computations are synchronous, so
``block_until_ready`` only returns its argument.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.array import copied_value
from funcgrad.core.dtypes import canonicalize
from funcgrad.core.prims.calls import jit_call_p
from funcgrad.core.staging import abstractify, hoist_consts, trace_to_jaxpr
from funcgrad.core.trace import Tracer, is_eager, is_staging
from funcgrad.core.wrapping import fun_name, wraps
from funcgrad.errors import ConcretizationError

__all__ = [
    "ShapeDtypeStruct", "eval_shape", "block_until_ready", "device_put", "device_get", "devices",
    "local_devices", "device_count", "local_device_count", "default_backend", "named_call",
]


class ShapeDtypeStruct:
    """Shape and dtype of an array without data: what ``eval_shape`` returns, and an
    argument ``make_jaxpr`` / ``jit(f).lower`` / ``eval_shape`` accept in place of one."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = canonicalize(dtype, what="ShapeDtypeStruct")
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct)
                and (self.shape, self.dtype, self.weak_type) == (other.shape, other.dtype, other.weak_type))

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes ``fun(*args, **kwargs)`` would have, as a pytree of
    ``ShapeDtypeStruct``, without computing anything (the function is traced once).
    Arguments may be arrays, scalars or anything with ``.shape`` and ``.dtype``.

    >>> eval_shape(lambda x: x @ x.T, ShapeDtypeStruct((3, 4), "float32"))
    ShapeDtypeStruct(shape=(3, 3), dtype=float32)
    """
    leaves, in_tree = pytree.tree_flatten((args, kwargs))
    avals = [abstractify(x, f"eval_shape argument leaf {i}") for i, x in enumerate(leaves)]

    def call(a, k):
        return fun(*a, **k)

    flat, out_tree = _flat(call, in_tree)
    jaxpr, _ = trace_to_jaxpr(flat, avals)
    outs = [ShapeDtypeStruct(v.aval.shape, v.aval.dtype, weak_type=v.aval.weak_type) for v in jaxpr.outvars]
    return pytree.tree_unflatten(out_tree[0], outs)


def _flat(call, in_tree):
    """``call(args, kwargs)`` over flat leaves; the output structure lands in the cell."""
    cell = []

    def flat(*leaves):
        a, k = pytree.tree_unflatten(in_tree, leaves)
        out_leaves, tree = pytree.tree_flatten(call(a, k))
        cell[:] = [tree]
        return out_leaves

    return flat, cell


def block_until_ready(x):
    """Wait for every array in the pytree ``x`` (funcgrad computes synchronously: returns ``x``)."""
    for leaf in pytree.tree_leaves(x):
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None and not isinstance(leaf, type):
            wait()
    return x


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Every leaf of ``x`` as a funcgrad value (``funcgrad.numpy.asarray``); ``device``
    may be None or the CPU device of ``devices()``."""
    import funcgrad.numpy as fnp

    if device is not None and not isinstance(device, CpuDevice):
        raise ValueError(f"device_put: argument device must be None or one of funcgrad.devices(), got {device!r}")
    return pytree.tree_map(fnp.asarray, x)


def device_get(x):
    """Every array leaf of ``x`` as a NumPy array (other leaves are returned as they are)."""
    def get(leaf):
        if isinstance(leaf, Tracer):
            return np.asarray(leaf)  # raises funcgrad's TracerArrayConversionError
        return np.asarray(leaf) if isinstance(leaf, (np.ndarray, np.generic)) else leaf

    return pytree.tree_map(get, x)


class CpuDevice:
    """The host CPU: the one device funcgrad computes on."""

    platform = "cpu"
    device_kind = "cpu"
    id = 0
    process_index = 0

    def __repr__(self):
        return "CpuDevice(id=0)"

    def __eq__(self, other):
        return isinstance(other, CpuDevice)

    def __hash__(self):
        return hash("funcgrad-cpu")


_CPU = CpuDevice()


def _check_backend(fname, backend):
    if backend not in (None, "cpu"):
        raise ValueError(f"{fname}: argument backend must be None or 'cpu' (funcgrad runs on the CPU), got {backend!r}")


def devices(backend=None) -> list:
    """``[CpuDevice(id=0)]``."""
    _check_backend("devices", backend)
    return [_CPU]


def local_devices(process_index=None, backend=None) -> list:
    """The devices of this process: one ``CpuDevice`` (funcgrad computes on the CPU)."""
    _check_backend("local_devices", backend)
    return [_CPU]


def device_count(backend=None) -> int:
    """The number of devices: 1 (the CPU)."""
    _check_backend("device_count", backend)
    return 1


def local_device_count(backend=None) -> int:
    """The number of devices of this process: 1 (the CPU)."""
    _check_backend("local_device_count", backend)
    return 1


def default_backend() -> str:
    """``"cpu"``."""
    return "cpu"


def named_call(fun, *, name=None):
    """``fun`` whose staged programs show it as one ``jit_call`` named ``name`` (the
    function's name by default), like ``jax.named_call``; eagerly it just runs ``fun``.
    Transforms see through the call (it is inlined when compiled)."""
    call_name = name if name is not None else fun_name(fun)
    if not isinstance(call_name, str):
        raise TypeError(f"named_call: argument name must be a str, got {type(call_name).__name__}")

    @wraps(fun)
    def named(*args, **kwargs):
        leaves, in_tree = pytree.tree_flatten((args, kwargs))
        if is_eager() and not any(isinstance(x, Tracer) for x in leaves):
            return pytree.tree_map(copied_value, fun(*args, **kwargs))
        flat, out_tree = _flat(lambda a, k: fun(*a, **k), in_tree)
        try:
            jaxpr, consts = trace_to_jaxpr(flat, [abstractify(x, f"{call_name} argument") for x in leaves])
        except ConcretizationError:
            if is_staging():
                raise
            # Python control flow on values under an eager grad/jvp: run it unstaged.
            return pytree.tree_map(copied_value, fun(*args, **kwargs))
        (closed,), hoisted = hoist_consts([(jaxpr, consts)])
        outs = jit_call_p.bind(*hoisted, *leaves, jaxpr=closed, name=call_name)
        return pytree.tree_unflatten(out_tree[0], outs)

    return named
