"""jit dispatch: the per-signature argument plan of a cached call (see ``jit.__call__``).

A cached call whose arguments are Python scalars, NumPy scalars or dicts/lists/tuples of
arrays skips ``_split`` + ``tree_flatten`` + key building: one walk over the arguments
builds a flat key (containers as a marker plus their keys/length, arrays as shape and
dtype, Python scalars as their type: a float is weakly typed, an int is not a float) and
collects the leaves in the walk's order, which the plan permutes into the flattening's
(dict children sorted by key). Anything else (a tracer, a namedtuple, a registered
node, an int beyond int64, keyword or static arguments) takes the general path, which
keeps every check and the cache-miss explanations (``jit_explain``). Plans are only
added after the general path ran the same call successfully.
"""
from __future__ import annotations

import weakref

import numpy as np

from funcgrad import config
from funcgrad.core import pytree
from funcgrad.core.array import Array
from funcgrad.core.trace import Tracer, get_aval_any

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_MAX_PLANS = 256  # (a function called with ever new signatures keeps using the general path)

_DICT, _LIST, _TUPLE, _NONE = object(), object(), object(), object()
FAST_TYPES = (np.ndarray, Array)  # eager values are Arrays
LIVE_JITTED = weakref.WeakSet()  # every live jitted function (funcgrad.clear_caches empties their caches)
_rules_now = [config.read("funcgrad_promotion")]


def promotion_rules_changed() -> None:
    """``funcgrad_promotion`` changed: each live jitted function sets its traces for the
    previous rules aside and takes back those it holds for the new ones (a program promotes
    by the rules it was traced under, so a signature traced under one is a cache miss under
    the other), and forgets its dispatch plans (``_fast``, ``_plans``, the native entry's),
    which call the previous rules' programs. Switching back finds the earlier traces."""
    new = config.read("funcgrad_promotion")
    old, _rules_now[0] = _rules_now[0], new
    if old == new:  # (another promotion flag changed)
        return
    for jf in list(LIVE_JITTED):
        aside = jf._caches_by_rules
        aside[old] = jf._cache
        jf._cache = aside.pop(new, {})
        jf._fast.clear()
        jf._plans.clear()
        jf._native_plans.clear()


config.PROMOTION_HOOKS.append(promotion_rules_changed)


def leaf_key(x):
    """The general path's cache key of one argument leaf (OverflowError: an int beyond int64)."""
    t = type(x)
    if t in FAST_TYPES or isinstance(x, np.generic):
        return (x.shape, x.dtype)
    if t is int and not _I64_MIN <= x <= _I64_MAX:
        raise OverflowError
    if t in (bool, int, float, complex):
        return t
    if isinstance(x, Tracer):
        a = x.aval
        return (a.shape, a.dtype, a.weak_type)
    return (type(x), get_aval_any(x))


def typed(v):
    """Cache key of a static value: its type too (``1``, ``1.0`` and ``True`` hash and
    compare equal but trace different programs), recursively inside tuples."""
    if isinstance(v, tuple):
        return (type(v), tuple(typed(e) for e in v))
    return (type(v), v)


_MAX_DEPTH = 64  # (deeper arguments take the general path: its walks are iterative)


def _walk(x, key, leaves, depth=0) -> bool:
    t = type(x)
    if t is np.ndarray or t is Array:
        key.append(x.shape)
        key.append(x.dtype)
    elif t is float or t is bool:
        key.append(t)
    elif t is int:
        if not _I64_MIN <= x <= _I64_MAX:
            return False  # (the general path raises the OverflowError naming the argument)
        key.append(t)
    elif t is dict or t is list or t is tuple:
        if depth > _MAX_DEPTH:
            return False
        if t is dict:
            key.append(_DICT)
            key.append(tuple(x))
            x = x.values()
        else:
            key.append(_LIST if t is list else _TUPLE)
            key.append(len(x))
        for v in x:
            tv = type(v)
            if tv is np.ndarray or tv is Array:  # (inline: the common leaf of a parameter tree)
                key.append(v.shape)
                key.append(v.dtype)
                leaves.append(v)
            elif not _walk(v, key, leaves, depth + 1):
                return False
        return True
    elif x is None:
        key.append(_NONE)
        return True
    elif isinstance(x, np.generic):
        key.append(x.shape)
        key.append(x.dtype)
    else:
        return False
    leaves.append(x)
    return True


def walk_args(args):
    """(flat key, leaves in walk order) of positional arguments, or None."""
    key, leaves = [], []
    for a in args:
        if not _walk(a, key, leaves):
            return None
    try:
        return tuple(key), leaves
    except TypeError:  # pragma: no cover - (dict keys are hashable by construction)
        return None


def raise_non_array(fname, dyn, leaves, labels):
    """The TypeError for the first of ``leaves`` that is not an array (a str in a dict of
    parameters), named by its argument and key path, with the fix."""
    from funcgrad.transforms.batching import leaf_owner

    for i, x in enumerate(leaves):
        try:
            leaf_key(x)
        except TypeError as e:
            raise TypeError(
                f"{fname}: {leaf_owner(dyn[0], dyn[1], i, labels)}: {e}. Arguments are arrays, scalars or pytrees "
                "of them: mark any other argument static (static_argnums/static_argnames) or close over it") from None


def raise_overflow(fname, dyn, leaves, labels):
    """The OverflowError for a Python int beyond int64 among ``leaves`` of the dynamic
    arguments ``dyn`` (``labels``: what to call each positional one)."""
    from funcgrad.transforms.batching import leaf_owner

    for i, x in enumerate(leaves):
        if type(x) is int and not _I64_MIN <= x <= _I64_MAX:
            raise OverflowError(
                f"{fname}: {leaf_owner(dyn[0], dyn[1], i, labels)} is the Python int {x}, which does not fit in int64 "
                "(pass it as a float, or as a static argument)"
            ) from None
    raise OverflowError(f"{fname}: an argument does not fit in int64")


def _numbered(x, counter):
    """``x`` (a structure ``walk_args`` accepted) with each leaf replaced by its index in
    the walk's order."""
    t = type(x)
    if t is dict:
        return {k: _numbered(v, counter) for k, v in x.items()}
    if t is list or t is tuple:
        return t(_numbered(v, counter) for v in x)
    if x is None:
        return None
    counter[0] += 1
    return counter[0] - 1


def leaf_perm(args, n_leaves: int):
    """For each flattened leaf of ``args``, its index in ``walk_args``' order (None if
    the walk does not accept ``args`` or sees another number of leaves). Structural, so
    the same object passed twice (``f(1, 1)``) still maps each leaf to its own place."""
    walked = walk_args(args)
    if walked is None or len(walked[1]) != n_leaves:
        return None
    counter = [0]
    perm, _ = pytree.tree_flatten([_numbered(a, counter) for a in args])
    return perm if len(perm) == n_leaves else None


def add_plan(plans: dict, args, leaves, entry) -> None:
    """Remember the plan of a call that just took the general path: its walk key and where
    each flattened leaf (``leaves``) sits in the walk's order; ``entry`` is
    ``(call, out_tree, single)``."""
    if len(plans) >= _MAX_PLANS:
        return
    perm = leaf_perm(args, len(leaves))
    if perm is None:
        return
    identity = perm == list(range(len(perm)))
    plans[walk_args(args)[0]] = (*entry, None if identity else perm)


# --- native dispatch (``lowering.native_entry``) -----------------------------------------------
# Native plans are made on a call's general path; the entry is compiled (once per process)
# by the next Python-path call of a function that has a plan (a repeat call), so a process
# that calls each function once never pays for it, nor does any function's first call.
# state: None (not installed yet), True (installed), False (unavailable: Python path only).
NATIVE = {"state": None, "pending": False}


def add_native_plan(jitted, args, leaves, exe, out_tree) -> None:
    """Give ``jitted`` the native plan of a call that just ran on the general path."""
    from funcgrad.lowering import native_entry

    if not native_entry.available():
        NATIVE["state"] = False
        return
    plans = getattr(jitted, "_native_plans", None)
    if plans is None or len(plans) >= native_entry.MAX_PLANS:
        return
    perm = leaf_perm(args, len(leaves))
    plan = None if perm is None else native_entry.make_plan(args, perm, exe, out_tree)
    if plan is not None:
        plans.append(plan)
        NATIVE["pending"] = NATIVE["state"] is None


def install_native(cls, trace_state, disabled: list, log) -> None:
    """Make ``cls.__call__`` the native entry, falling back to ``cls._call``."""
    NATIVE["pending"] = False
    from funcgrad.lowering import native_entry

    try:
        descr = native_entry.install(cls, cls._call, trace_state, disabled, cls._call.__doc__ or "")
    except (RuntimeError, OSError, AttributeError, ValueError) as e:  # (calls stay on the Python path)
        log(f"jit: native dispatch unavailable: {e}")
        NATIVE["state"] = False
        return
    cls.__call__ = descr
    NATIVE["state"] = True


__all__ = ["walk_args", "add_plan", "leaf_perm", "raise_overflow", "leaf_key", "typed", "FAST_TYPES", "NATIVE",
           "add_native_plan", "install_native"]
