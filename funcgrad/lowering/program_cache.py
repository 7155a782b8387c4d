"""The program level of the disk cache: a jaxpr's compiled form found without emitting IR.

The object-code cache (``disk_cache``) is keyed by the IR text, so a hit still pays for
simplifying the jaxpr, planning its loops and emitting the text (for the 50-op W10
function about 4.5 ms of a 12 ms warm start). This cache keys a small record by the
*program* instead: a fingerprint of the jaxpr ``compile_jaxpr`` receives (its equations,
avals, params, literals; the values of 0-d constants, which the code folds in, and a
digest of the other constants, which the code reads through ``@fg_const<k>`` but whose
values can steer the simplifier, e.g. a transform's identity basis), the
engine's target fingerprint, funcgrad's source files and the settings that change
emission. The record names the object code (its ``disk_cache`` key) and what linking it
needs: the external names it declares, the name binders to replay (``engine.provider``:
math libraries, LAPACK routines), which program constant each ``@fg_const<k>`` is, and
the executable's stats. It holds no addresses and no code; it is JSON, read back only
through checks (anything unexpected is a miss, and the program is compiled as usual).

A program is left out (compiled the usual way every time) when a param has no stable
encoding (a Python callable: host callbacks) or a constant the code reads is not one of
the program's own (a host-callback registration, a sub-program's array constant).
"""
from __future__ import annotations

import enum
import hashlib
import json
import marshal
import os
import struct
import sys

import numpy as np

from funcgrad.core.ad_util import is_transform_basis, is_transform_zero
from funcgrad.core.avals import ShapedArray
from funcgrad.core.ir import ClosedJaxpr, Jaxpr, Literal
from funcgrad.lowering import disk_cache

FORMAT = 1
# in this process (tests and benchmarks read them)
counts = {"hits": 0, "stores": 0, "library_hits": 0, "library_stores": 0}


class _NoStableEncoding(Exception):
    pass


_PLAIN = frozenset({int, bool, str, type(None), bytes})  # (floats by their bits: NaN payloads, -0.0)
_DOUBLE = struct.Struct("<d")


class _Fingerprint:
    """Tokens (nested tuples of str/int/float/bytes) describing a closed jaxpr and its
    sub-jaxprs; shared sub-jaxprs are one table entry, referenced by index (so two
    programs with the same fingerprint also share the same way)."""

    def __init__(self):
        self.table: list = []
        self.index: dict[int, int] = {}
        self._avals: dict[int, tuple] = {}
        self._alive: list = []  # the ids above stay valid while fingerprinting

    def aval(self, a) -> tuple:
        tok = self._avals.get(id(a))
        if tok is None:
            if type(a) is not ShapedArray:
                raise _NoStableEncoding(type(a).__name__)
            tok = self._avals[id(a)] = (a.dtype.str, a.shape, a.weak_type)
            self._alive.append(a)
        return tok

    def value(self, x) -> tuple:
        arr = np.asarray(x)
        return (arr.dtype.str, arr.shape, arr.tobytes())

    def jaxpr(self, node) -> int:
        k = self.index.get(id(node))
        if k is not None:
            return k
        k = self.index[id(node)] = len(self.table)
        self._alive.append(node)
        self.table.append(None)
        closed = isinstance(node, ClosedJaxpr)
        j = node.jaxpr if closed else node
        num: dict[int, int] = {}
        aval = self.aval
        for v in j.constvars:
            num[id(v)] = len(num)
        for v in j.invars:
            num[id(v)] = len(num)

        def atom(a):
            n = num.get(id(a))
            if n is not None:
                return n
            if type(a) is Literal:
                v = a.val
                t = type(v)
                if t is float:
                    return (aval(a.aval), "f", _DOUBLE.pack(v))
                if t in _PLAIN:
                    return (aval(a.aval), t.__name__, v)
                # (a transform's zero lets the simplifier drop arithmetic a user's does not)
                return (aval(a.aval), self.value(v), is_transform_zero(v))
            raise _NoStableEncoding("an unbound variable")

        eqns = []
        for e in j.eqns:
            ins = tuple([atom(a) for a in e.inputs])
            outs = []
            for v in e.outputs:
                num[id(v)] = len(num)
                outs.append(aval(v.aval))
            params = e.params
            ptok = tuple([(name, self.param(params[name])) for name in sorted(params)]) if params else ()
            eqns.append((e.primitive.name, ins, tuple(outs), ptok))
        consts = ()
        if closed:  # 0-d values are folded into the code; the others' values may steer
            # the simplifier (``algebra``: an identity-matrix constant drops a product)
            consts = tuple((self.value(c) if np.ndim(c) == 0 else _digest(c), is_transform_basis(c))
                           for c in node.consts)
        self.table[k] = (closed, tuple([aval(v.aval) for v in j.constvars]), consts,
                         tuple([aval(v.aval) for v in j.invars]), tuple(eqns), tuple([atom(a) for a in j.outvars]))
        return k

    def param(self, v):
        t = type(v)
        if t in _PLAIN:
            return v
        if t is float:
            return ("f", _DOUBLE.pack(v))
        if t is tuple or t is list:
            return (t.__name__, tuple([self.param(x) for x in v]))
        if isinstance(v, np.dtype):
            return ("dtype", v.str)
        if isinstance(v, (ClosedJaxpr, Jaxpr)):
            return ("jaxpr", self.jaxpr(v))
        if t is ShapedArray:
            return ("aval", self.aval(v))
        if isinstance(v, type) and issubclass(v, np.generic):
            return ("dtype", np.dtype(v).str)
        if isinstance(v, (np.ndarray, np.generic)):
            return ("array", self.value(v))
        if isinstance(v, enum.Enum):
            return ("enum", t.__module__, t.__qualname__, v.name)
        if isinstance(v, tuple) and hasattr(t, "_fields"):  # a NamedTuple of plain values
            return ("named", t.__module__, t.__qualname__, tuple([self.param(x) for x in v]))
        if t is dict:
            return ("dict", tuple(sorted((repr(a), self.param(b)) for a, b in v.items())))
        if t is frozenset:
            return ("frozenset", tuple(sorted(repr(self.param(x)) for x in v)))
        if t is slice:
            return ("slice", self.param(v.start), self.param(v.stop), self.param(v.step))
        raise _NoStableEncoding(t.__name__)


def _digest(c) -> tuple:
    """(dtype, shape, SHA-256 of the bytes) of an array constant, without copying it
    unless it is not C-contiguous (a transposed or broadcast view)."""
    arr = np.asarray(c)
    # Flat first: memoryview refuses to cast an n-d view with a zero in its shape (a
    # (2, 0) constant), while a flat zero-length one casts to no bytes.
    flat = np.ascontiguousarray(arr).reshape(-1)
    return (arr.dtype.str, arr.shape, hashlib.sha256(memoryview(flat).cast("B")).digest())


def key(closed: ClosedJaxpr, engine_fingerprint: str, settings: str) -> str | None:
    """The record's key for ``closed``, or None if it has no stable fingerprint."""
    from funcgrad.lowering.compiler import dce  # (compiler imports the engine, which imports us)

    # Dead equations do not change the compiled code (``simplify`` removes them first), so
    # the fingerprint leaves them out: cheaper (400 of the 503 equations of the 50-op W10
    # function are dead), and programs differing only in dead code share a record.
    live = dce(closed.jaxpr)
    if live is not closed.jaxpr:
        closed = ClosedJaxpr(live, closed.consts)
    fp = _Fingerprint()
    try:
        fp.jaxpr(closed)
    except _NoStableEncoding:
        return None
    # marshal (format 2: no back-references) writes the tokens' types and values exactly, in
    # C, ~10x faster than repr; its output is decodable, so two tables never share bytes.
    digest = hashlib.sha256(marshal.dumps(fp.table, 2)).hexdigest()
    return disk_cache.key(f"program {digest}", "\n".join([engine_fingerprint, _PYTHON, _source_stamp(), settings]))


_PYTHON = f"python {sys.version_info[0]}.{sys.version_info[1]}"
_stamp: list = []


def _source_stamp() -> str:
    """Size and modification time of every funcgrad source file: emission changes with
    the code, and a record must not outlive the code that wrote it. (Once per process,
    at the first key: ``scandir`` entries, no path arithmetic -- it is part of a warm
    start.)"""
    if not _stamp:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        cut = len(root) + 1
        parts, folders = [], [root]
        while folders:
            with os.scandir(folders.pop()) as it:
                entries = sorted(it, key=lambda e: e.name)
            for e in entries:
                if e.name.endswith(".py"):
                    st = e.stat()
                    parts.append(f"{e.path[cut:]}:{st.st_size}:{st.st_mtime_ns}")
                elif not e.name.startswith((".", "__")) and e.is_dir():
                    folders.append(e.path)
        _stamp.append("\n".join(parts))
    return _stamp[0]


# --- records ------------------------------------------------------------------------------------

def _write(k: str, record: dict) -> None:
    disk_cache.store(k, json.dumps({"format": FORMAT, **record}, separators=(",", ":"), sort_keys=True).encode())


def _read(k: str) -> dict | None:
    """The JSON object stored under ``k`` in this code's format, else None."""
    raw = disk_cache.load(k)
    if raw is None:
        return None
    try:
        r = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return r if isinstance(r, dict) and r.get("format") == FORMAT else None


def store(k: str, record: dict) -> None:
    counts["stores"] += 1
    _write(k, record)


def load(k: str) -> dict | None:
    """The record under ``k`` if it is one this code wrote (shape checked), else None."""
    r = _read(k)
    ok = (r is not None and isinstance(r.get("object"), str)
          and _strs(r.get("declared")) and _strs(r.get("symbols")) and isinstance(r.get("stats"), dict)
          and isinstance(r.get("keep"), list) and all(type(j) is int and j >= 0 for j in r["keep"])
          and isinstance(r.get("requires"), list)
          and all(isinstance(q, list) and q and isinstance(q[0], str) for q in r["requires"]))
    return r if ok else None


# --- process-long libraries ---------------------------------------------------------------------
# A library compiled once per process (a vector-math function for one dtype) is found the same
# way: its record, keyed by its name and funcgrad's code version rather than its IR text, names
# its object code, so a warm process links it without emitting the text to hash it.

def library_key(name: str, engine_fingerprint: str) -> str:
    """The record key of the library ``name`` (which must say everything its text depends
    on besides funcgrad's source files: e.g. the function and the dtype)."""
    return disk_cache.key(f"library {name}", "\n".join([engine_fingerprint, _PYTHON, _source_stamp()]))


def store_library(k: str, object_key: str, declared: list, **extra) -> None:
    """Write the library record under ``k`` (``extra``: more JSON fields)."""
    counts["library_stores"] += 1
    _write(k, {**extra, "library": True, "object": object_key, "declared": declared})


def load_library(k: str) -> dict | None:
    """The library record under ``k`` ({"object", "declared"}) if it is one, else None."""
    r = _read(k)
    ok = r is not None and r.get("library") is True and isinstance(r.get("object"), str) and _strs(r.get("declared"))
    return r if ok else None


def _strs(x) -> bool:
    return isinstance(x, list) and all(isinstance(s, str) for s in x)
