"""Closed jaxprs to and from the JSON header (+ raw bytes in the data section).

A program is a table of jaxprs, children before parents, so a sub-jaxpr (a ``cond``
branch, a ``scan`` body) is a reference ``{"j": index}`` to an earlier entry and shared
sub-jaxprs are stored once. One entry::

    {"closed": true, "constvars": [aval...], "consts": [value...], "in": [aval...],
     "eqns": [[primitive name, [atom...], [output aval...], {param: value}]...],
     "out": [atom...]}

Variables are numbered in binding order (constvars, invars, then each equation's
outputs); an atom is that number, or ``{"l": value, "a": aval}`` for a literal. An aval is
``[dtype name, [dims...], weak (0/1)]``, or ``{"tape": [...], "batch", "shape",
"inner"}`` for a run-time tape. Array values (constants, literals) are ``[kind, dtype,
[dims...], [offset, nbytes]]`` into the data section, little-endian, so they come back
bit for bit; ``kind`` says which Python type they had (a Python scalar, a NumPy scalar,
an ndarray, a funcgrad ``Array``), since weak typing depends on it. Params are encoded
by type: ``bool``, ``int``, ``str`` and ``null`` as themselves, ``{"f": float.hex()}``,
``{"t": [...]}`` (tuple), ``{"L": [...]}`` (list), ``{"m": [[key, value]...]}`` (dict),
``{"d": name}`` (a dtype), ``{"dt": name}`` (a NumPy scalar type), ``{"s": value}`` (a
NumPy scalar), ``{"a": aval}``, ``{"j": index}`` (a sub-jaxpr). A Python callable has
no encoding: programs are exported after the calls that hold them are inlined.

Decoding accepts only that grammar: primitives are looked up by name among those
funcgrad declares (and only ones with a compiled form), dtypes in funcgrad's list; the
result is checked in full (``funcgrad/export/check.py``) before it is returned.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.array import fresh_value
from funcgrad.core.avals import ShapedArray, is_python_scalar
from funcgrad.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from funcgrad.core.primitive import ALLOWED_MISSING, PRIMITIVES, lower_rules
from funcgrad.errors import ExportError
from funcgrad.export import check
from funcgrad.tapes import TapeAval

_DTYPES = {dt.name: dt for dt in dtypes.SUPPORTED}


class DecodeError(Exception):
    """Internal: the header breaks the grammar (turned into ``ExportError`` by the caller)."""


def _check(ok, what):
    if not ok:
        raise DecodeError(what)


# --- encoding ----------------------------------------------------------------------------------

def _load_lower_rules() -> None:
    """Exportable means compilable: the lowering registers the lower rules when it is
    imported, which ``import funcgrad`` no longer does (it loads llvmlite)."""
    import funcgrad.lowering  # noqa: F401


def exportable_problem(closed: ClosedJaxpr):
    """Why ``closed`` cannot be exported (a primitive with no compiled form, a param
    that is a Python callable), or None."""
    _load_lower_rules()
    todo, seen = [closed.jaxpr], set()
    while todo:
        j = todo.pop()
        if id(j) in seen:
            continue
        seen.add(id(j))
        for e in j.eqns:
            prim = e.primitive
            if prim not in lower_rules:
                why = ALLOWED_MISSING["lower"].get(prim.name, "it has no compiled form")
                return f"primitive '{prim.name}' cannot be exported: {why}"
            for k, v in e.params.items():
                for x in v if isinstance(v, tuple) else (v,):
                    if isinstance(x, (ClosedJaxpr, Jaxpr)):
                        todo.append(x.jaxpr if isinstance(x, ClosedJaxpr) else x)
                    elif callable(x) and not isinstance(x, type):
                        return (f"primitive '{prim.name}' holds a Python callable in its param '{k}' "
                                f"({getattr(x, '__name__', type(x).__name__)}), which cannot be serialized")
    return None


class Encoder:
    def __init__(self, data):
        self.data = data  # wire.DataWriter
        self.table: list = []
        self.index: dict[int, int] = {}
        self._keep: list = []  # the ids above stay valid while encoding

    def program(self, closed: ClosedJaxpr) -> int:
        """Add ``closed`` and its sub-jaxprs to the table (post-order); its index."""
        stack = [(closed, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in self.index:
                continue
            if expanded:
                self.index[id(node)] = len(self.table)
                self._keep.append(node)
                self.table.append(self._jaxpr(node))
                continue
            stack.append((node, True))
            jaxpr = node.jaxpr if isinstance(node, ClosedJaxpr) else node
            for e in jaxpr.eqns:
                for v in e.params.values():
                    for x in v if isinstance(v, tuple) else (v,):
                        if isinstance(x, (ClosedJaxpr, Jaxpr)) and id(x) not in self.index:
                            stack.append((x, False))
        return self.index[id(closed)]

    def _jaxpr(self, node) -> dict:
        closed = isinstance(node, ClosedJaxpr)
        jaxpr = node.jaxpr if closed else node
        num: dict[int, int] = {}

        def bind(v):
            num[id(v)] = len(num)

        def atom(a):
            if isinstance(a, Literal):
                return {"l": self.value(a.val, a.aval), "a": aval_to_json(a.aval)}
            return num[id(a)]

        for v in jaxpr.constvars + jaxpr.invars:
            bind(v)
        eqns = []
        for e in jaxpr.eqns:
            ins = [atom(a) for a in e.inputs]
            for v in e.outputs:
                bind(v)
            params = {k: self.param(e.params[k], e.primitive.name, k) for k in sorted(e.params)}
            eqns.append([e.primitive.name, ins, [aval_to_json(v.aval) for v in e.outputs], params])
        consts = [self.value(c, v.aval) for c, v in zip(node.consts, jaxpr.constvars)] if closed else []
        return {"closed": closed, "constvars": [aval_to_json(v.aval) for v in jaxpr.constvars], "consts": consts,
                "in": [aval_to_json(v.aval) for v in jaxpr.invars], "eqns": eqns,
                "out": [atom(a) for a in jaxpr.outvars]}

    def value(self, x, aval=None) -> list:
        if is_python_scalar(x):
            kind, arr = "py", np.asarray(x, aval.dtype if aval is not None else None)
        elif isinstance(x, np.generic):
            kind, arr = "g", np.asarray(x)
        elif isinstance(x, np.ndarray):
            kind, arr = ("A" if type(x) is not np.ndarray else "n"), x
        else:
            raise ExportError(f"funcgrad.export: a constant of type {type(x).__name__} cannot be serialized")
        if arr.dtype not in dtypes.SUPPORTED:
            raise ExportError(f"funcgrad.export: a constant of dtype {arr.dtype} cannot be serialized")
        raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
        return [kind, arr.dtype.name, list(arr.shape), self.data.add(raw)]

    def param(self, v, prim: str, name: str):
        if v is None or isinstance(v, (bool, str)):
            return v
        if type(v) is int:
            return v
        if type(v) is float:
            return {"f": v.hex()}
        if isinstance(v, tuple) and not hasattr(type(v), "_fields"):
            return {"t": [self.param(x, prim, name) for x in v]}
        if type(v) is list:
            return {"L": [self.param(x, prim, name) for x in v]}
        if type(v) is dict:
            return {"m": [[self.param(k, prim, name), self.param(x, prim, name)] for k, x in v.items()]}
        if isinstance(v, np.dtype):
            return {"d": v.name}
        if isinstance(v, type) and issubclass(v, np.generic):
            return {"dt": np.dtype(v).name}
        if isinstance(v, np.generic):
            return {"s": self.value(v)}
        if isinstance(v, ShapedArray):
            return {"a": aval_to_json(v)}
        if isinstance(v, (ClosedJaxpr, Jaxpr)):
            return {"j": self.index[id(v)]}
        raise ExportError(f"funcgrad.export: param '{name}' of primitive '{prim}' is a {type(v).__name__}, "
                          "which the export format cannot encode")


def aval_to_json(a):
    if isinstance(a, TapeAval):
        return {"tape": [aval_to_json(r) for r in a.res_avals], "batch": a.batch, "shape": list(a.shape),
                "inner": list(a.inner)}
    return [a.dtype.name, list(a.shape), int(a.weak_type)]


# --- decoding ----------------------------------------------------------------------------------

def _ints(x, what):
    _check(isinstance(x, list) and all(type(d) is int and d >= 0 for d in x), f"{what}: expected a list of sizes")
    return tuple(x)


def aval_from_json(x):
    if isinstance(x, dict):
        _check(set(x) == {"tape", "batch", "shape", "inner"} and isinstance(x["tape"], list), "malformed tape aval")
        batch = x["batch"]
        _check(batch is None or (type(batch) is int and batch >= 0), "malformed tape batch size")
        aval = TapeAval([aval_from_json(r) for r in x["tape"]], batch, _ints(x["shape"], "tape shape"),
                        _ints(x["inner"], "tape levels"))
        _check(aval.n_masks <= len(aval.res_avals) and (batch is not None or not aval.inner), "malformed tape aval")
    else:
        _check(isinstance(x, list) and len(x) == 3 and x[0] in _DTYPES and type(x[2]) is int and x[2] in (0, 1),
               f"malformed aval {x!r:.80}")
        aval = ShapedArray(_ints(x[1], "aval shape"), _DTYPES[x[0]], bool(x[2]))
    problem = check.aval_problem(aval)
    _check(problem is None, problem)
    return aval


class Decoder:
    def __init__(self, data: memoryview):
        _load_lower_rules()
        self.data = data
        self.table: list = []

    def value(self, x):
        _check(isinstance(x, list) and len(x) == 4 and x[0] in ("py", "g", "n", "A") and x[1] in _DTYPES,
               f"malformed array value {x!r:.80}")
        kind, dt, shape, ref = x[0], _DTYPES[x[1]], _ints(x[2], "value shape"), x[3]
        _check(isinstance(ref, list) and len(ref) == 2 and all(type(r) is int and r >= 0 for r in ref),
               "malformed data reference")
        off, n = ref
        _check(n == int(np.prod(shape, dtype=object)) * dt.itemsize and off + n <= len(self.data),
               f"array value of shape {shape} and dtype {dt.name} does not match its {n} bytes at offset {off}")
        arr = np.frombuffer(self.data[off:off + n], dtype=dt.newbyteorder("<")).astype(dt).reshape(shape)
        if kind == "py":
            _check(shape == (), "a Python scalar value must be 0-d")
            return arr.item()
        if kind == "g":
            _check(shape == (), "a NumPy scalar value must be 0-d")
            return arr[()]
        arr.setflags(write=False)
        return fresh_value(arr) if kind == "A" else arr

    def param(self, x):
        if x is None or isinstance(x, (bool, int, str)):
            return x
        _check(isinstance(x, dict) and len(x) == 1, f"malformed param {x!r:.80}")
        (tag, v), = x.items()
        if tag == "f":
            _check(isinstance(v, str), "malformed float param")
            return float.fromhex(v)
        if tag in ("t", "L"):
            _check(isinstance(v, list), "malformed sequence param")
            items = [self.param(e) for e in v]
            return tuple(items) if tag == "t" else items
        if tag == "m":
            _check(isinstance(v, list) and all(isinstance(p, list) and len(p) == 2 for p in v), "malformed dict")
            return {self.param(k): self.param(e) for k, e in v}
        if tag in ("d", "dt"):
            _check(v in _DTYPES, f"unsupported dtype {v!r:.40}")
            return _DTYPES[v] if tag == "d" else _DTYPES[v].type
        if tag == "s":
            out = self.value(v)
            _check(isinstance(out, np.generic), "malformed NumPy scalar param")
            return out
        if tag == "a":
            return aval_from_json(v)
        if tag == "j":
            _check(type(v) is int and 0 <= v < len(self.table), f"reference to sub-jaxpr {v!r:.20} not yet defined")
            return self.table[v]
        raise DecodeError(f"unknown param tag {tag!r:.20}")

    def jaxpr(self, x):
        _check(isinstance(x, dict) and set(x) == {"closed", "constvars", "consts", "in", "eqns", "out"},
               "malformed jaxpr entry")
        for k in ("constvars", "consts", "in", "eqns", "out"):
            _check(isinstance(x[k], list), f"malformed jaxpr field {k!r}")
        env: list[Var] = []

        def new(aval_json):
            v = Var(aval_from_json(aval_json))
            env.append(v)
            return v

        def atom(a):
            if isinstance(a, dict):
                _check(set(a) == {"l", "a"}, "malformed literal")
                val, aval = self.value(a["l"]), aval_from_json(a["a"])
                _check(np.shape(val) == () and aval.shape == () and np.asarray(val).dtype == aval.dtype,
                       "a literal must be a scalar of its stated type")
                return Literal(val, aval)
            _check(type(a) is int and 0 <= a < len(env), f"reference to variable {a!r:.20} before it is bound")
            return env[a]

        constvars = [new(a) for a in x["constvars"]]
        invars = [new(a) for a in x["in"]]
        eqns = []
        for e in x["eqns"]:
            _check(isinstance(e, list) and len(e) == 4 and isinstance(e[0], str), "malformed equation")
            prim = PRIMITIVES.get(e[0])
            _check(prim is not None and prim in lower_rules, f"unknown or non-exportable primitive {e[0]!r:.60}")
            _check(isinstance(e[1], list) and isinstance(e[2], list) and isinstance(e[3], dict),
                   f"malformed '{e[0]}' equation")
            ins = [atom(a) for a in e[1]]
            outs = [new(a) for a in e[2]]
            _check(prim.multiple_results or len(outs) == 1, f"'{e[0]}' has exactly one output")
            eqns.append(Eqn(prim, ins, outs, {k: self.param(v) for k, v in e[3].items()}))
        jaxpr = Jaxpr(constvars, invars, eqns, [atom(a) for a in x["out"]])
        if x["closed"] is True:
            _check(len(x["consts"]) == len(constvars), "constants do not match the constvars")
            consts = [self.value(c) for c in x["consts"]]
            for c, v in zip(consts, constvars):
                _check(not isinstance(v.aval, TapeAval) and np.shape(c) == v.aval.shape
                       and np.asarray(c).dtype == v.aval.dtype, "a constant does not match its constvar's type")
            return ClosedJaxpr(jaxpr, consts)
        _check(x["closed"] is False and not x["consts"], "malformed jaxpr entry")
        return jaxpr

    def program(self, table, root, name: str) -> ClosedJaxpr:
        _check(isinstance(table, list) and type(root) is int and 0 <= root < len(table), "malformed program table")
        for entry in table:
            self.table.append(self.jaxpr(entry))
        closed = self.table[root]
        _check(isinstance(closed, ClosedJaxpr), "the program root is not a closed jaxpr")
        check.check_program(closed, name)  # every equation of every sub-program, before anything runs
        return closed
