"""Pickling a ``jit``-ted function by its exported form (for shipping it to worker
processes that lack its source, issue #18).

``pickle.dumps(jit(f))`` stores one export blob per signature ``jit(f)`` has compiled
(call it once per signature first), with the static argument values of each and the
names of ``f``'s positional parameters (to bind keyword arguments as ``jit`` does).
``pickle.loads`` gives a ``LoadedJit``: calling it with one of those signatures runs
that program (with VJP programs to ``vjp_order``, 1 by default, so ``grad`` of it works);
any other signature is a ``TypeError`` listing the ones it has (nothing can be traced
without the source). A ``LoadedJit`` pickles the same way.
"""
from __future__ import annotations

import hashlib
import inspect
import os
import threading
from collections import OrderedDict

from funcgrad.core import pytree
from funcgrad.core.pytree import PyTreeDef
from funcgrad.core.trace import get_aval_any
from funcgrad.errors import ExportError
from funcgrad.export import codec, wire
from funcgrad.export.exported import Exported, deserialize

PICKLE_VJP_ORDER = 1  # VJP levels a pickled jitted function carries (grad on the worker)

# What this process has unpickled, by the SHA-256 of its blobs: a worker that receives the
# same function with every task loads (and compiles) it once, since executables live in the
# memo of the loaded program. Bounded, least recently used first.
LOADED_MAX = 64
load_counts = {"loads": 0, "hits": 0}  # in this process (tests read them on workers)
_loaded: OrderedDict = OrderedDict()
_loaded_lock = threading.Lock()


def cached_load(parts, build):
    """``build()``, or what it returned for the same ``parts`` (bytes) in this process."""
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little") + p)
    key = h.digest()
    with _loaded_lock:
        hit = _loaded.get(key)
        if hit is not None:
            _loaded.move_to_end(key)
            load_counts["hits"] += 1
            return hit
    obj = build()
    with _loaded_lock:
        load_counts["loads"] += 1
        _loaded[key] = obj
        while len(_loaded) > LOADED_MAX:
            _loaded.popitem(last=False)
    return obj


def load_blob(blob) -> Exported:
    """``deserialize(blob)``, once per process for the same bytes (``Exported``'s unpickler)."""
    return cached_load([b"exported", bytes(blob)], lambda: deserialize(blob))


def _typed(v):
    """Static values are told apart by type too (``1``, ``1.0``, ``True``), as in jit."""
    if isinstance(v, tuple):
        return (tuple, tuple(_typed(e) for e in v))
    return (type(v), v)


def _untyped(t):
    return tuple(_untyped(e) for e in t[1]) if t[0] is tuple else t[1]


def _static_blob(statics) -> bytes:
    data = wire.DataWriter()
    enc = codec.Encoder(data)
    return wire.seal({"statics": enc.param(statics, "jit", "static arguments")}, data.getvalue())


def _static_load(blob):
    header, data = wire.unseal(blob)
    try:
        return codec.Decoder(data).param(header["statics"])
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"funcgrad.export: malformed pickled jit static arguments: {e}") from None


def reduce_jitted(jf):
    """``JittedFunction.__reduce__``: its compiled signatures as export blobs."""
    entries = []
    for key, (closed, _, out_tree) in list(jf._cache.items()):
        dyn_tree, _, static_key, nargs = key
        args_node, kw_node = dyn_tree.children
        in_tree = PyTreeDef(tuple, None, (PyTreeDef(tuple, None, args_node.children), kw_node))
        from funcgrad.lowering.inline import inline_calls  # lazy: import funcgrad stays free of llvmlite

        exp = Exported(jf.__name__, in_tree, out_tree, inline_calls(closed), source=closed)
        statics = (tuple((i, _untyped(t)) for i, t in static_key[0]), tuple((k, _untyped(t)) for k, t in static_key[1]))
        entries.append((nargs, _static_blob(statics), exp.serialize(vjp_order=PICKLE_VJP_ORDER)))
    sig = getattr(jf, "_sig", None)
    names = tuple(p.name for p in sig.parameters.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)) \
        if sig is not None else ()
    return (_load_jitted, (jf.__name__, names, jf._static_argnums, jf._static_argnames, entries))


def _load_jitted(name, names, static_argnums, static_argnames, entries):
    def build():
        loaded = [(nargs, _static_load(s), load_blob(b)) for nargs, s, b in entries]
        return LoadedJit(name, names, static_argnums, static_argnames, loaded)

    head = repr((name, tuple(names), tuple(static_argnums), tuple(static_argnames))).encode()
    return cached_load([b"jit", head, *[p for n, s, b in entries for p in (str(n).encode(), s, b)]], build)


class LoadedJit:
    """A jitted function unpickled without its source: the signatures it was pickled with."""

    def __init__(self, name, names, static_argnums, static_argnames, entries):
        self.__name__ = name
        self._names, self._static_argnums, self._static_argnames = tuple(names), tuple(static_argnums), \
            tuple(static_argnames)
        self._entries = entries  # [(nargs, (static positions, static keywords), Exported)]
        self._keys = [(n, _typed(s)) for n, s, _ in entries]

    def __repr__(self):
        return f"<loaded jit({self.__name__}), {len(self._entries)} signature(s)>"

    def __call__(self, *args, **kwargs):
        args, kwargs = list(args), dict(kwargs)
        for n in self._names[len(args):]:  # keyword arguments bound to positions, as jit binds them
            if n not in kwargs:
                break
            args.append(kwargs.pop(n))
        nargs = len(args)
        static_pos = sorted({i % nargs for i in self._static_argnums if -nargs <= i < nargs})
        statics = (tuple((i, args[i]) for i in static_pos),
                   tuple(sorted((k, v) for k, v in kwargs.items() if k in self._static_argnames)))
        dyn = (tuple(a for i, a in enumerate(args) if i not in static_pos),
               {k: v for k, v in kwargs.items() if k not in self._static_argnames})
        leaves, tree = pytree.tree_flatten(dyn)
        try:
            key = (nargs, _typed(statics))
        except TypeError:
            key = None
        for k, (_, _, exp) in zip(self._keys, self._entries):
            if k == key and tree == exp.in_tree and all(
                    get_aval_any(x).same_type(a) for x, a in zip(leaves, exp.in_avals)):
                return exp.call(*dyn[0], **dyn[1])
        have = "; ".join(f"({', '.join(a.str_short() for a in e.in_avals)})" for _, _, e in self._entries) or "none"
        got = ", ".join(get_aval_any(x).str_short() for x in leaves)
        raise TypeError(
            f"jit({self.__name__}) was unpickled without its source and has only the signatures it had compiled "
            f"when pickled ({have}); this call passes ({got}) and static arguments {statics}. Call the function "
            "with each signature you need before pickling it")

    def __reduce__(self):
        entries = [(n, _static_blob(s), e.serialize(vjp_order=_levels(e))) for n, s, e in self._entries]
        return (_load_jitted, (self.__name__, self._names, self._static_argnums, self._static_argnames, entries))


def _levels(e: Exported) -> int:
    n = 0
    while e.has_vjp() and n < PICKLE_VJP_ORDER:
        n, e = n + 1, e.vjp()
    return n


# A forked child has only the forking thread: a lock another thread held at the fork
# would never be released there.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_loaded_lock._at_fork_reinit)
