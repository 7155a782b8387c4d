"""Why did ``jit`` trace again? Cache misses explained from the cache keys alone.

A jit cache key is ``(in_tree, leaf_keys, static_key, nargs)`` (``JittedFunction._key``):
the pytree structure of the dynamic arguments ``(positional list, keyword dict)``, one
key per leaf (``(shape, dtype)`` of an array, the type of a Python scalar -- weakly
typed --, ``(shape, dtype, weak_type)`` of a tracer, ``(type, aval)`` otherwise), the
static arguments' typed values, and the number of positional arguments. Rebuilding
the argument trees with the leaf keys as leaves lets a miss be compared argument by
argument, key path by key path, with every cached signature; the nearest one (fewest
differences, the most recent on a tie) is reported.

``FUNCGRAD_LOG_COMPILES=1`` logs one line per compilation with its cause (the first
difference); ``FUNCGRAD_EXPLAIN_CACHE_MISSES=1`` logs, on every trace after a
function's first, all the differences from the nearest cached signature.
"""
from __future__ import annotations

import sys

import numpy as np

from funcgrad import config
from funcgrad.core import pytree
from funcgrad.core.avals import ShapedArray

_PY_DTYPES = {bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64)}


class _Leaf:
    """A leaf key standing in for its argument (opaque to pytrees: keys are tuples)."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key


def _arguments(key):
    """({position: dynamic argument tree}, {name: tree}, {position: static}, {name: static}, nargs)."""
    in_tree, leaf_keys, (static_pos, static_kw), nargs = key
    args, kw = pytree.tree_unflatten(in_tree, [_Leaf(k) for k in leaf_keys])
    static = dict(static_pos)
    positions = [i for i in range(nargs) if i not in static]
    return dict(zip(positions, args)), dict(kw), static, dict(static_kw), nargs


def _aval_of(k) -> tuple[ShapedArray, str]:
    """(the abstract value a leaf key stands for, what kind of value it was)."""
    if isinstance(k, type) and k in _PY_DTYPES:
        return ShapedArray((), _PY_DTYPES[k], weak_type=True), f"a Python {k.__name__}"
    if isinstance(k, tuple) and len(k) == 3:
        return ShapedArray(k[0], k[1], k[2]), "a traced value"
    if isinstance(k, tuple) and len(k) == 2 and isinstance(k[0], type):
        return k[1], f"a {k[0].__name__}"
    return ShapedArray(k[0], k[1]), "an array"


def _leaf_difference(a, b) -> str:
    (av_a, what_a), (av_b, what_b) = _aval_of(a), _aval_of(b)
    parts = []
    if av_a.shape != av_b.shape:
        parts.append(f"shape {av_a.shape} -> {av_b.shape}")
    if av_a.dtype != av_b.dtype:
        parts.append(f"dtype {av_a.dtype.name} -> {av_b.dtype.name}")
    if av_a.weak_type != av_b.weak_type:
        parts.append("weak type: " + ("weak -> strong" if av_a.weak_type else "strong -> weak"))
    if what_a != what_b:
        parts.append(f"{what_a} -> {what_b}")
    return f"{av_a.str_short()} -> {av_b.str_short()} ({'; '.join(parts) or 'different'})"


def _tree_differences(where: str, old, new) -> list[str]:
    old_leaves, old_def = pytree.tree_flatten_with_path(old)
    new_leaves, new_def = pytree.tree_flatten_with_path(new)
    if old_def != new_def:
        return [f"{where}: pytree structure {_structure(old_def)} -> {_structure(new_def)}"]
    return [f"{where}{pytree.keystr(path)}: {_leaf_difference(a.key, b.key)}"
            for (path, a), (_, b) in zip(old_leaves, new_leaves) if a.key != b.key]


def _structure(treedef) -> str:
    text = repr(treedef)
    return text[len("PyTreeDef("):-1] if text.startswith("PyTreeDef(") else text


def _untyped(t):
    tp, v = t  # (``jit._typed``: type and value, recursively in tuples)
    return tuple(_untyped(e) for e in v) if issubclass(tp, tuple) else v


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:59] + "…"


def _static_difference(where: str, a, b) -> list[str]:
    if a == b:
        return []
    (ta, _), (tb, _) = a, b
    va, vb = _short(_untyped(a)), _short(_untyped(b))
    if ta is not tb:
        return [f"{where} (static): type {ta.__name__} -> {tb.__name__} (value {va} -> {vb})"]
    return [f"{where} (static): value {va} -> {vb}"]


def _presence(where: str, old: dict, new: dict, k) -> list[str] | None:
    if k in old and k in new:
        return None
    return [f"{where}: passed now, not before" if k in new else f"{where}: not passed now"]


def differences(old_key, new_key, label) -> list[str]:
    """What differs between two cache keys, one line per difference (``label(i)``
    names positional argument ``i``)."""
    o_pos, o_kw, o_spos, o_skw, o_n = _arguments(old_key)
    n_pos, n_kw, n_spos, n_skw, n_n = _arguments(new_key)
    out = []
    if o_n != n_n:
        out.append(f"called with {n_n} positional argument{'' if n_n == 1 else 's'}, {o_n} before")
    for i in sorted(set(o_pos) | set(n_pos)):
        where = f"argument {label(i)}"
        out += _presence(where, o_pos, n_pos, i) or _tree_differences(where, o_pos[i], n_pos[i])
    for i in sorted(set(o_spos) | set(n_spos)):
        where = f"argument {label(i)}"
        out += _presence(where + " (static)", o_spos, n_spos, i) or _static_difference(where, o_spos[i], n_spos[i])
    for k in sorted(set(o_kw) | set(n_kw)):
        where = f"keyword argument '{k}'"
        out += _presence(where, o_kw, n_kw, k) or _tree_differences(where, o_kw[k], n_kw[k])
    for k in sorted(set(o_skw) | set(n_skw)):
        where = f"keyword argument '{k}'"
        out += _presence(where + " (static)", o_skw, n_skw, k) or _static_difference(where, o_skw[k], n_skw[k])
    return out or ["an argument differs in a way the signature does not show"]


def nearest(cache_keys, key, label) -> tuple[int, list[str]]:
    """(number of cached signatures, the differences from the nearest one)."""
    best = None
    n = 0
    for old in cache_keys:
        n += 1
        diffs = differences(old, key, label)
        if best is None or len(diffs) <= len(best):
            best = diffs
    return n, best or []


def refuse_tracing(fname: str) -> None:
    """Inside ``funcgrad.no_tracing()``: a jitted function that traced raises (its program is
    not cached)."""
    if config.NO_TRACING[0]:
        raise RuntimeError(f"jit({fname}) traced its function inside no_tracing() (jax_no_tracing): a call with "
                           "a new signature of arguments, or the first call")


def log_trace(fname: str, cache_keys, key, label, traces: int) -> None:
    """Log a trace of ``jit(fname)`` for the signature ``key`` (the cache does not hold
    it), as the switches ask; ``traces``: how many times it has been traced, this one
    included."""
    refuse_tracing(fname)
    log_compiles, explain = config.flag(config.LOG_COMPILES), config.flag(config.EXPLAIN_CACHE_MISSES)
    if not (log_compiles or (explain and traces > 1)):
        return
    n, diffs = nearest(cache_keys, key, label)
    if n == 0:
        diffs = ["the cache was cleared"] if traces > 1 else []
    if log_compiles:
        cause = "first call" if not diffs else diffs[0] + (
            f" (and {len(diffs) - 1} more difference{'' if len(diffs) == 2 else 's'})" if len(diffs) > 1 else "")
        _log(f"compiling jit({fname}) [cache size {n}]: {cause}")
    if explain and traces > 1:
        head = (f"jit({fname}): cache miss, tracing again (retrace {traces - 1}; "
                f"{n} signature{'' if n == 1 else 's'} cached)")
        _log(head + (": the nearest cached signature differs in\n" if n else ":\n")
             + "\n".join("    " + d for d in diffs))


def log_uncached_trace(fname: str, traces: int) -> None:
    refuse_tracing(fname)
    if config.flag(config.EXPLAIN_CACHE_MISSES) and traces > 1:
        _log(f"jit({fname}): tracing again (retrace {traces - 1}): it closes over values traced by an "
             "enclosing transform, so its program is not cached")


def _log(msg: str) -> None:
    print(f"[funcgrad] {msg}", file=sys.stderr)
