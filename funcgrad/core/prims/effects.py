"""Host callbacks: one primitive, ``callback``, that calls Python with run-time values.

``funcgrad.debug.print`` / ``debug.callback`` (``effect="debug"``: no outputs),
``funcgrad.io_callback`` (``effect="io"``) and ``funcgrad.pure_callback`` (``effect=None``)
all bind ``callback_p``. Its params hold the Python side as a ``HostCallback`` (hashable
by identity): ``host(*arrays) -> list of arrays`` of ``out_avals``. Transforms do not
look inside the function; they wrap it:

- ``PerLane(inner, batched, size)``: vmap, one call per lane (the effects, and
  ``vmap_method="sequential"``);
- ``Vectorized(base, method, levels)``: ``vmap_method="expand_dims"/"broadcast_all"``;
- ``Predicated(inner)``: takes a leading bool operand and calls ``inner`` only when it is
  true (the lanes of a cond under vmap whose index does not select the branch: see
  ``funcgrad/transforms/effects.py``).

An equation is *effectful* (``eqn_has_effects``) when it is a debug/io callback or holds
a sub-jaxpr with one: DCE and CSE keep such equations (``transforms/jaxpr_ad.dce_jaxpr``,
``lowering/compiler.simplify``). Effects run in program order everywhere (eagerly, in the
evaluator and in compiled code), so ``ordered=True`` needs nothing more. The lower rule
(a call into Python through a trampoline) is in ``funcgrad/lowering/effects.py``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.ad_util import Zero
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import batch_size, moveaxis
from funcgrad.core.primitive import Primitive, allow_missing, batch_rules, jvp_rules

# --- the Python side ---------------------------------------------------------------------------


def as_host_array(x) -> np.ndarray:
    """What a callback receives: a NumPy array it owns (a copy)."""
    return np.array(x)


def check_results(name: str, results, out_avals) -> list:
    """``results`` (a sequence of array-likes) as arrays of exactly ``out_avals``, or a
    TypeError naming the function and both the declared and returned types."""
    results = list(results)
    if len(results) != len(out_avals):
        raise TypeError(f"{name}: the callback returned {len(results)} arrays but the declared "
                        f"result_shape_dtypes has {len(out_avals)} leaves")
    out = []
    for k, (r, aval) in enumerate(zip(results, out_avals)):
        want = np.dtype(aval.dtype)
        weak = isinstance(r, (bool, int, float)) and not isinstance(r, np.generic)
        arr = np.asarray(r, dtype=want) if weak else np.asarray(r)
        if arr.shape != tuple(aval.shape) or arr.dtype != want:
            raise TypeError(
                f"{name}: result leaf {k} has shape {arr.shape} and dtype {arr.dtype}, but "
                f"result_shape_dtypes declares shape {tuple(aval.shape)} and dtype {want} ({aval.str_short()})")
        out.append(arr)
    return out


class HostCallback:
    """``self(*arrays) -> list of arrays`` (of ``out_avals``). Compared by identity."""

    name = "callback"
    out_avals: tuple = ()

    def __repr__(self):
        return self.name

    @property
    def __name__(self):  # (the jaxpr printer shows callables by name)
        return self.name


class UserCallback(HostCallback):
    """The user's function, flattened by the API layer: ``fn(*leaves) -> list of leaves``
    (None for debug callbacks, which return nothing)."""

    def __init__(self, fn, out_avals, name: str):
        self.fn, self.out_avals, self.name = fn, tuple(out_avals), name

    def __call__(self, *args):
        return self.call_with(args, self.out_avals)

    def call_with(self, args, out_avals):
        res = self.fn(*[as_host_array(a) for a in args])
        return [] if res is None and not out_avals else check_results(self.name, res, out_avals)


def _batched(aval, size):
    return ShapedArray((size,) + tuple(aval.shape), aval.dtype)


class PerLane(HostCallback):
    """``inner`` called once per lane; ``batched[k]``: operand k has the lane axis at 0."""

    def __init__(self, inner, batched, size: int):
        self.inner, self.batched, self.size = inner, tuple(batched), int(size)
        self.out_avals = tuple(_batched(a, size) for a in inner.out_avals)
        self.name = inner.name

    def __call__(self, *args):
        outs = [np.empty(a.shape, a.dtype) for a in self.out_avals]
        for i in range(self.size):
            res = self.inner(*[np.asarray(a)[i] if b else a for a, b in zip(args, self.batched)])
            for o, r in zip(outs, res):
                o[i] = r
        return outs


class Predicated(HostCallback):
    """Takes a leading bool scalar: ``inner(*rest)`` if it is true, else zeros."""

    def __init__(self, inner):
        self.inner, self.out_avals, self.name = inner, inner.out_avals, inner.name

    def __call__(self, pred, *args):
        if bool(np.asarray(pred)):
            return self.inner(*args)
        return [np.zeros(a.shape, a.dtype) for a in self.out_avals]


class Vectorized(HostCallback):
    """One call of the user's function on whole batches (JAX's ``vmap_method``
    ``"expand_dims"``: operands not mapped at a vmap level get a size-1 axis there;
    ``"broadcast_all"``: they are broadcast). ``levels``: ((size, batched flags), ...),
    outermost vmap first; an operand holds a leading axis for each level that maps it."""

    def __init__(self, base: UserCallback, method: str, levels):
        self.base, self.method, self.levels = base, method, tuple(levels)
        sizes = tuple(s for s, _ in self.levels)
        self.out_avals = tuple(ShapedArray(sizes + tuple(a.shape), a.dtype) for a in base.out_avals)
        self.name = base.name

    def __call__(self, *args):
        sizes = [s for s, _ in self.levels]
        full = []
        for k, a in enumerate(args):
            a = np.asarray(a)
            shape, pos = list(a.shape), 0
            for size, flags in self.levels:
                if not flags[k]:
                    shape.insert(pos, 1)
                pos += 1
            a = a.reshape(shape)
            if self.method == "broadcast_all":
                a = np.broadcast_to(a, tuple(sizes) + a.shape[len(sizes):])
            full.append(a)
        return self.base.call_with(full, self.out_avals)


# --- the primitive ----------------------------------------------------------------------------

callback_p = Primitive("callback", multiple_results=True)
callback_p.impl_takes_python_scalars = True  # (converted to arrays by the callback itself)
# Which equations of this primitive must never be removed or merged (DCE, CSE).
callback_p.effectful = lambda params: params["effect"] is not None

EFFECTS = (None, "debug", "io")
VMAP_METHODS = (None, "sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


@callback_p.def_impl
def _callback_impl(*args, callback, out_avals, effect, ordered, vmap_method):
    return callback(*args)


@callback_p.def_abstract_eval
def _callback_abstract_eval(*avals, callback, out_avals, effect, ordered, vmap_method):
    if effect not in EFFECTS or vmap_method not in VMAP_METHODS:
        raise ValueError(f"callback: unknown effect {effect!r} or vmap_method {vmap_method!r}")
    return [a.strip_weak_type() for a in out_avals]


def _callback_jvp(primals, tangents, **params):
    if params["effect"] != "debug" and any(type(t) is not Zero for t in tangents):
        name = params["callback"].name
        if params["effect"] == "io":
            raise ValueError(f"io_callback ({name}) cannot be differentiated: its inputs have tangents. "
                             "Wrap the function calling it in funcgrad.custom_jvp or custom_vjp to give it a "
                             "derivative, or pass values through funcgrad.lax.stop_gradient.")
        raise ValueError(
            f"pure_callback ({name}) cannot be differentiated: funcgrad cannot see inside the host function. "
            "Wrap the function that calls pure_callback in funcgrad.custom_jvp (define its JVP with "
            "@f.defjvp) or funcgrad.custom_vjp (@f.defvjp), computing the derivative with another callback "
            "or with funcgrad.numpy.")
    outs = callback_p.bind(*primals, **params)  # debug callbacks see the primal values only
    return outs, [Zero(a) for a in params["out_avals"]]


def _callback_batch(args, bdims, *, callback, out_avals, effect, ordered, vmap_method):
    size = batch_size(args, bdims)
    moved = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args, bdims)]
    batched = [d is not None for d in bdims]
    if effect is None and vmap_method is None:
        raise NotImplementedError(
            f"pure_callback ({callback.name}) under vmap needs an explicit vmap_method (as in JAX): "
            "'sequential' (one call per example), 'expand_dims' (one call; unmapped arguments get a "
            "leading axis of size 1) or 'broadcast_all' (one call; every argument broadcast to the batch)")
    if effect is None and vmap_method in ("expand_dims", "broadcast_all"):
        if isinstance(callback, Vectorized):
            host = Vectorized(callback.base, vmap_method, ((size, batched),) + callback.levels)
        else:
            host = Vectorized(callback, vmap_method, ((size, batched),))
    else:  # effects always run once per lane, with the lane's values
        host = PerLane(callback, batched, size)
    outs = callback_p.bind(*moved, callback=host, out_avals=host.out_avals, effect=effect, ordered=ordered,
                           vmap_method=vmap_method)
    return outs, [0] * len(outs)


jvp_rules[callback_p] = _callback_jvp
batch_rules[callback_p] = _callback_batch
allow_missing("transpose", callback_p, "not linear: a host function is opaque (differentiate it with custom_jvp)")


# --- which equations have effects ---------------------------------------------------------------
_memo: dict = {}


def eqn_has_effects(e) -> bool:
    """True for a debug/io callback, or a higher-order equation holding one."""
    prim = e.primitive
    flag = getattr(prim, "effectful", None)
    if flag is not None and flag(e.params):
        return True
    for name in prim.jaxpr_params:
        value = e.params[name]
        for closed in value if isinstance(value, tuple) else (value,):
            if jaxpr_has_effects(closed.jaxpr):
                return True
    return False


def jaxpr_has_effects(jaxpr) -> bool:
    hit = _memo.get(id(jaxpr))
    if hit is not None and hit[0] is jaxpr:
        return hit[1]
    out = any(eqn_has_effects(e) for e in jaxpr.eqns)
    if len(_memo) > 4096:
        _memo.clear()
    _memo[id(jaxpr)] = (jaxpr, out)
    return out


__all__ = ["callback_p", "HostCallback", "UserCallback", "PerLane", "Predicated", "Vectorized",
           "check_results", "eqn_has_effects", "jaxpr_has_effects"]
