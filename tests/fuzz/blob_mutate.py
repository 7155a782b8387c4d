"""Seed programs and structural mutations for the blob fuzzer (``blobs.py``).

A case is a seed: it picks one of ``BASES`` (exported programs covering while, scan,
cond, gather, scatter, dynamic_slice, tapes and custom rules), one of its records (the
function or a VJP program), and applies 1 to 3 mutations to that record's parsed
header: a changed shape, dtype or weak flag of any aval (an equation's output, a
sub-program's input or output, a constant), a changed param (ints nudged, flipped,
made huge or negative; tuples reordered, shortened, lengthened; strings, dtypes and
types swapped), swapped variables, a dropped or duplicated equation, a swapped
sub-program reference, another primitive of the same arity, a changed literal. The
result is resealed (``blob_edit``), so only the checks inside the loader stand
between the mutation and compiled code.
"""
from __future__ import annotations

import copy
import random

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

from .blob_edit import BlobEditor

_x4 = np.array([0.3, -1.2, 0.8, 2.0])
_m = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])


def _while(x):
    return lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 1.5 + fnp.sin(c[0]), c[1] + 1), (x, 0))[0]


def _data_while(x):
    body = lambda c: (c[0] * 0.8 + fnp.tanh(c[0]) * 0.1, c[1] + fnp.sum(c[0] * c[0]), c[2] + 1)  # noqa: E731
    return lax.while_loop(lambda c: (fnp.max(fnp.abs(c[0])) > 0.05) & (c[2] < 40), body, (x, 0.0, 0))[1]


def _scan(x, m):
    c, ys = lax.scan(lambda c, row: (c + row * x[:3], fnp.dot(row, c)), fnp.zeros(3), m)
    return c, ys, lax.scan(lambda c, v: (c * v, c + v), 1.0, x, reverse=True)


def _cond(x, i):
    return (lax.cond(x[0] > 0, lambda v: v * 2, lambda v: -v[::-1], x),
            lax.switch(i, [fnp.sin, fnp.cos, lambda v: v[:2].sum() * v], x))


def _indexing(x, i, m):
    return (x[i], x.at[i].add(1.0), fnp.take(x, i + 3, mode="fill", fill_value=-7.0), m[i[:1], 1:],
            lax.dynamic_slice(x, (i[0],), (2,)), lax.dynamic_update_slice(m, x[:2].reshape(1, 2), (i[1], i[0])),
            x.at[i].set(5.0, mode="drop"), fnp.take_along_axis(m[:2], fnp.abs(i[:2]).reshape(2, 1) % 3, 1))


def _structural(x, m):
    y = fnp.concatenate([fnp.flip(x), fnp.pad(x, (1, 1))]).reshape(2, 5).T[::2]
    return (y, fnp.sum(m, 0), fnp.argmax(m, 1), fnp.cumsum(m, 1), m @ x[:3], fnp.sort(x), fnp.argsort(-x),
            lax.iota(np.int32, 4) * 2, fnp.prod(m[1:, :2]), x.astype(np.float32) * 2)


@fg.custom_jvp
def _softplus(x):
    return fnp.log1p(fnp.exp(x))


_softplus.defjvp(lambda p, t: (_softplus(p[0]), t[0] * fg.nn.sigmoid(p[0])))


@fg.custom_vjp
def _scaled(x):
    return fnp.sin(x)


_scaled.defvjp(lambda x: (fnp.sin(x), x), lambda x, ct: (ct * 3.0,))


def _custom(x):
    return fnp.sum(_softplus(x)) + fnp.sum(_scaled(x)) + fg.checkpoint(fnp.cos)(x[0])


def _loss_while(x):
    c = lax.while_loop(lambda c: fnp.sum(c) < 20.0, lambda c: c * 1.5 + fnp.sin(c), x)
    return fnp.sum(c * c)


# name -> (function to export, example arguments, VJP levels to serialize). Tapes appear
# in a grad's program (while_tape, tape_apply) and in its VJP (tape_scan, split, zip).
BASES = {
    "while": (_while, (_x4,), 1),
    "data_while": (_data_while, (_x4,), 1),
    "scan": (_scan, (_x4, _m), 1),
    "cond": (_cond, (_x4, 1), 1),
    "indexing": (_indexing, (_x4, np.array([2, -1, 0]), _m), 1),
    "structural": (_structural, (_x4, _m), 0),
    "custom": (_custom, (_x4,), 1),
    "grad_while": (fg.grad(_loss_while), (np.abs(_x4) + 0.5,), 1),
    "vmap_grad_while": (fg.vmap(fg.grad(_loss_while)), (np.abs(_m) + 0.5,), 0),
    "grad_scan_while": (fg.grad(lambda x: fnp.sum(_scan(x, _m)[1]) + _data_while(x)), (_x4,), 1),
    # (tape_empty and tape_zeros: a cond with a loop in one branch; tape_zip: forward over reverse)
    "grad_cond_while": (fg.grad(lambda x: lax.cond(x[0] > 0, _loss_while, fnp.sum, x)), (np.abs(_x4) + 0.5,), 1),
    "hessian_while": (fg.jacfwd(fg.grad(_loss_while)), (np.abs(_x4[:2]) + 0.5,), 1),
}


def base_blob(name: str) -> bytes:
    fun, args, order = BASES[name]
    return fg.export(fg.jit(fun))(*args).serialize(vjp_order=order)


# --- the mutations (each edits one record's JSON in place; False when it found nothing to do) -----

def _avals(rec):
    """Every aval list in the record: (container, key) pairs whose value is ``[dtype, dims, weak]``."""
    found = []
    for j in rec["jaxprs"]:
        for lst in (j["constvars"], j["in"]):
            found += [(lst, k) for k in range(len(lst))]
        for e in j["eqns"]:
            found += [(e[2], k) for k in range(len(e[2]))]
            found += [(a, "a") for a in e[1] if isinstance(a, dict)]
    return found


def _leaf_aval(holder, key):
    a = holder[key]  # (tape avals, dicts, are mutated by ``_tape``)
    return a if isinstance(a, list) else None


DTYPES = ["float64", "float32", "int64", "int32", "bool", "uint8", "complex128", "int16", "uint32"]


def _shape(rng, rec):
    cands = [(h, k) for h, k in _avals(rec) if _leaf_aval(h, k) is not None]
    if not cands:
        return False
    h, k = rng.choice(cands)
    dims = list(h[k][1])
    op = rng.randrange(5)
    if op == 0 and dims:
        dims[rng.randrange(len(dims))] += rng.choice([-1, 1, 4, 1000, 10 ** 7])
    elif op == 1:
        dims.insert(rng.randrange(len(dims) + 1), rng.choice([1, 2, 3]))
    elif op == 2 and dims:
        dims.pop(rng.randrange(len(dims)))
    elif op == 3:
        dims = [rng.choice([0, 1, 2, 8])] * rng.randrange(3)
    else:
        dims = dims[::-1] if len(dims) > 1 else [rng.choice([0, 5])]
    h[k] = [h[k][0], [max(d, 0) for d in dims], h[k][2]]
    return True


def _dtype(rng, rec):
    cands = [(h, k) for h, k in _avals(rec) if _leaf_aval(h, k) is not None]
    if not cands:
        return False
    h, k = rng.choice(cands)
    h[k] = [rng.choice(DTYPES), h[k][1], h[k][2]]
    return True


def _weak(rng, rec):
    cands = [(h, k) for h, k in _avals(rec) if _leaf_aval(h, k) is not None]
    if not cands:
        return False
    h, k = rng.choice(cands)
    h[k] = [h[k][0], h[k][1], 1 - h[k][2]]
    return True


def _param_nodes(rec):
    """(container, key) of every param value and of every element nested in one."""
    found, todo = [], []
    for j in rec["jaxprs"]:
        for e in j["eqns"]:
            todo += [(e[3], k) for k in e[3]]
    while todo:
        h, k = todo.pop()
        found.append((h, k))
        v = h[k]
        if isinstance(v, dict) and len(v) == 1:
            (tag, inner), = v.items()
            if tag in ("t", "L") and isinstance(inner, list):
                todo += [(inner, i) for i in range(len(inner))]
    return found


def _param(rng, rec):
    cands = _param_nodes(rec)
    if not cands:
        return False
    h, k = rng.choice(cands)
    v = h[k]
    if isinstance(v, bool):
        h[k] = rng.choice([not v, 1, 0, None])
    elif isinstance(v, int):
        h[k] = rng.choice([v + 1, v - 1, -v - 1, v + 4, 2 ** 40, -(2 ** 63), True, 0, {"f": (1.0 * v).hex()},
                           {"t": [v]}])
    elif isinstance(v, dict) and "t" in v:
        items = v["t"]
        op = rng.randrange(5)
        if op == 0 and len(items) > 1:
            items = items[::-1]
        elif op == 1 and items:
            items = items[:-1]
        elif op == 2:
            items = items + [items[-1] if items else 0]
        elif op == 3:
            h[k] = {"L": items}
            return True
        else:
            h[k] = {"t": [{"t": [1, 2]}, 2.5]} if rng.random() < 0.5 else None
            return True
        h[k] = {"t": items}
    elif isinstance(v, dict) and "j" in v:
        n = len(rec["jaxprs"])
        h[k] = {"j": rng.randrange(n)} if rng.random() < 0.8 else {"t": [v, v]}
    elif isinstance(v, dict) and ("d" in v or "dt" in v):
        h[k] = {next(iter(v)): rng.choice(DTYPES)}
    elif isinstance(v, str):
        h[k] = rng.choice(["clip", "fill", "drop", "add", "set", "mul", "min", "max", "promise_in_bounds", "rfft",
                           "ifft", "", 3])
    elif isinstance(v, dict) and "tape" in v:
        _tape(rng, v)
    else:
        h[k] = rng.choice([None, 0, {"t": [0, 1, 2]}, {"f": "0x1.8p+1"}, {"d": "float32"}, "clip", {"j": 0}])
    return True


def _tape(rng, t):
    op = rng.randrange(4)
    if op == 0 and t["tape"]:
        t["tape"].pop(rng.randrange(len(t["tape"])))
    elif op == 1:
        t["tape"].append(["float64", [rng.choice([1, 4, 1000])], 0])
    elif op == 2 and t["tape"]:
        i = rng.randrange(len(t["tape"]))
        if isinstance(t["tape"][i], list):
            t["tape"][i] = [t["tape"][i][0], [rng.choice([2, 3, 64])], 0]
    else:
        t["batch"] = rng.choice([None, 0, 2, 3])


def _bound_count(j, upto_eqn):
    return len(j["constvars"]) + len(j["in"]) + sum(len(e[2]) for e in j["eqns"][:upto_eqn])


def _swap_var(rng, rec):
    cands = [(j, i) for j in rec["jaxprs"] for i, e in enumerate(j["eqns"]) if any(type(a) is int for a in e[1])]
    if not cands:
        return False
    j, i = rng.choice(cands)
    e = j["eqns"][i]
    pos = rng.choice([p for p, a in enumerate(e[1]) if type(a) is int])
    e[1][pos] = rng.randrange(max(_bound_count(j, i), 1))
    return True


def _renumber(j, first, delta, gone=None, rng=None):
    """Shift every reference >= first by delta; references into ``gone`` (a range) go to
    an earlier variable."""
    def fix(a):
        if type(a) is not int:
            return a
        if gone is not None and a in gone:
            return rng.randrange(max(gone.start, 1))
        return a + delta if a >= first else a

    for e in j["eqns"]:
        e[1] = [fix(a) for a in e[1]]
    j["out"] = [fix(a) for a in j["out"]]


def _drop_eqn(rng, rec):
    cands = [j for j in rec["jaxprs"] if j["eqns"]]
    if not cands:
        return False
    j = rng.choice(cands)
    i = rng.randrange(len(j["eqns"]))
    start, n = _bound_count(j, i), len(j["eqns"][i][2])
    del j["eqns"][i]
    _renumber(j, start + n, -n, range(start, start + n), rng)
    return True


def _dup_eqn(rng, rec):
    cands = [j for j in rec["jaxprs"] if j["eqns"]]
    if not cands:
        return False
    j = rng.choice(cands)
    i = rng.randrange(len(j["eqns"]))
    start, n = _bound_count(j, i + 1), len(j["eqns"][i][2])
    _renumber(j, start, n)
    j["eqns"].insert(i + 1, copy.deepcopy(j["eqns"][i]))  # (its outputs go unused: a valid program)
    return True


ARITY_GROUPS = [["add", "sub", "mul", "div", "max", "min", "pow", "atan2", "rem"],
                ["sin", "cos", "exp", "neg", "tanh", "log", "abs", "sqrt"],
                ["lt", "gt", "le", "ge", "eq", "ne"], ["while", "while_tape"], ["scan", "while"],
                ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "cumsum", "cumprod", "argmax"],
                ["gather", "dynamic_slice", "scatter", "dynamic_update_slice"],
                ["tape_apply", "tape_scan"], ["tape_split", "tape_zip", "tape_empty", "tape_zeros"],
                ["slice", "rev", "transpose", "reshape", "broadcast_in_dim"], ["cond", "callback"]]


def _prim(rng, rec):
    cands = [e for j in rec["jaxprs"] for e in j["eqns"] if any(e[0] in g for g in ARITY_GROUPS)]
    if not cands:
        return False
    e = rng.choice(cands)
    e[0] = rng.choice([p for g in ARITY_GROUPS if e[0] in g for p in g])
    return True


def _literal(rng, rec):
    cands = [a for j in rec["jaxprs"] for e in j["eqns"] for a in e[1] if isinstance(a, dict)]
    if not cands:
        return False
    a = rng.choice(cands)
    if rng.random() < 0.5:
        a["a"] = [rng.choice(DTYPES), a["a"][1], a["a"][2]]
    else:
        a["l"] = [a["l"][0], rng.choice(DTYPES), a["l"][2], a["l"][3]]
    return True


def _out(rng, rec):
    j = rng.choice(rec["jaxprs"])
    if not j["out"]:
        return False
    n = _bound_count(j, len(j["eqns"]))
    k = rng.randrange(len(j["out"]))
    op = rng.randrange(3)
    if op == 0 and n:
        j["out"][k] = rng.randrange(n)
    elif op == 1:
        j["out"].pop(k)
    else:
        j["out"].append(j["out"][k])
    return True


def _sub_avals(rng, rec):
    """A sub-program's declared input or output changed (the attack on loop bodies)."""
    root = rec["root"]
    subs = [j for i, j in enumerate(rec["jaxprs"]) if i != root and j["in"]]
    if not subs:
        return False
    j = rng.choice(subs)
    k = rng.randrange(len(j["in"]))
    a = j["in"][k]
    if isinstance(a, list):
        dims = list(a[1]) or [1]
        dims[rng.randrange(len(dims))] = rng.choice([0, 1, 8, 1000, 10 ** 7])
        j["in"][k] = [rng.choice([a[0], a[0], "float32", "int64"]), dims, a[2]]
    else:
        _tape(rng, a)
    return True


def _tape_out(rng, rec):
    """A tape type declared by an equation's output or a sub-program's input changed."""
    cands = [t for j in rec["jaxprs"] for lst in [j["in"]] + [e[2] for e in j["eqns"]] for t in lst
             if isinstance(t, dict)]
    if not cands:
        return False
    _tape(rng, rng.choice(cands))
    return True


def _attack(rng, rec):
    """The attack on loop bodies: a sub-program declares input k larger (N elements) and
    reads its last elements, so that it is consistent in itself; only a check of the
    sub-program against its caller's operands can stop it."""
    root = rec["root"]
    cands = [(j, k) for i, j in enumerate(rec["jaxprs"]) if i != root
             for k, a in enumerate(j["in"]) if isinstance(a, list) and len(a[1]) == 1 and a[1][0] > 0]
    if not cands:
        return False
    j, k = rng.choice(cands)
    dtype, (n,), weak = j["in"][k]
    big = n + rng.choice([4, 1000, 10 ** 7])
    j["in"][k] = [dtype, [big], weak]
    var = len(j["constvars"]) + k
    new = len(j["constvars"]) + len(j["in"])  # the slice's output: the first equation's
    _renumber(j, new, 1)
    for e in j["eqns"]:
        e[1] = [new if a == var else a for a in e[1]]
    j["out"] = [new if a == var else a for a in j["out"]]
    j["eqns"].insert(0, ["slice", [var], [[dtype, [n], weak]],
                         {"start_indices": {"t": [big - n]}, "limit_indices": {"t": [big]}, "strides": None}])
    return True


MUTATIONS = [_shape, _dtype, _weak, _param, _param, _swap_var, _drop_eqn, _dup_eqn, _prim, _literal, _out,
             _sub_avals, _sub_avals, _tape_out, _attack]


def mutated(seed: int, blobs: dict) -> tuple[str, int, list, bytes]:
    """(base name, record index, mutation names, resealed blob) of case ``seed``."""
    rng = random.Random(seed)
    name = sorted(BASES)[seed % len(BASES)]
    ed = BlobEditor(blobs[name])
    record = rng.randrange(len(ed.header["exports"]))
    rec = ed.header["exports"][record]
    done = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        m = rng.choice(MUTATIONS)
        if m(rng, rec):
            done.append(m.__name__.lstrip("_"))
    return name, record, done, ed.seal()
