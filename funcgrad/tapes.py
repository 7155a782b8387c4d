"""Run-time tapes: reverse mode through a ``while_loop`` whose trip count is known only
when it runs (beyond JAX).

The model. Linearizing a staged while splits its body into a forward part (carry ->
carry + residuals) and a linear part (residuals + tangents -> tangents). The forward
loop ``while_tape`` appends each iteration's residuals to a *tape*, a value whose
length is decided at run time: a Python list of records (one tuple of residuals per
iteration) when evaluated eagerly, a growable heap buffer in compiled code
(``funcgrad/lowering/tapes.py``). ``tape_apply`` replays the linear part over the
records, forwards or backwards (its transpose). Differentiating that program again
(reverse over reverse, hessians) needs the derivative of a tape's contents: a tape of
residual tangents, made and consumed by ``tape_scan`` (a scan whose ``xs`` and ``ys``
are tapes), cut and joined by ``tape_split`` / ``tape_zip``. ``tape_empty`` is the
placeholder a cond branch outputs in another branch's tape slot; ``tape_zeros`` a zero
(co)tangent tape, which has no length of its own: it reads as records of zeros, as
many as the tapes it is scanned or zipped with.

Types. ``TapeAval`` is a tape's type: the residuals' avals per record, the vmap batch
levels (a batched tape's records end with each level's "still running" lane mask), and
a shape for a stack of tapes (one per iteration of an enclosing scan).

This module is a peer of ``core`` and imports only core: it declares the tape
primitives (impl, abstract_eval) and fills in core's per-aval-type tables (zeros, sums,
batching, stacking) for ``TapeAval``. Their transform rules are in
``funcgrad/transforms/control_flow/tapes.py`` and ``tape_scan.py``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import ad_util, batch_util
from funcgrad.core.avals import ShapedArray
from funcgrad.core.interpret import eval_jaxpr
from funcgrad.core.ir import ClosedJaxpr
from funcgrad.core.primitive import Primitive
from funcgrad.core.prims import control_flow as cf_prims
from funcgrad.core.prims.control_flow import check_closed, check_count, check_sub_inputs, check_while, while_parts
from funcgrad.core.staging import trace_to_jaxpr
from funcgrad.core.trace import get_aval_any


class TapeAval(ShapedArray):
    """Type of a run-time tape: per-iteration residuals of a loop whose trip count is
    only known when it runs (reverse mode through ``while_loop``). ``res_avals`` are the
    residuals' types per iteration; ``batch`` is the vmap size when the residuals carry a
    leading batch axis and each record ends with a per-lane "still running" mask (else
    None). Under nested vmaps ``inner`` lists the sizes of the inner batch levels
    (innermost first): each level adds its axis to every field and appends its mask."""

    __slots__ = ("res_avals", "batch", "inner")

    def __init__(self, res_avals, batch=None, shape=(), inner=()):
        # ``shape`` is non-empty for a stack of tapes (one per iteration of an enclosing
        # scan); indexing its leading axis gives the per-iteration tape.
        super().__init__(shape, np.dtype(object), False)
        self.res_avals = tuple(res_avals)
        self.batch = batch
        self.inner = tuple(inner)

    def str_short(self) -> str:
        inner = ",".join(a.str_short() for a in self.res_avals)
        dims = f"<{','.join(map(str, self.shape))}>" if self.shape else ""
        if self.batch is None:
            return f"tape{dims}[{inner}]"
        levels = ",".join(map(str, self.inner + (self.batch,)))
        return f"tape{dims}{{batch={levels}}}[{inner}]"

    __str__ = str_short

    def update(self, shape=None, dtype=None, weak_type=None):
        return TapeAval(self.res_avals, self.batch, self.shape if shape is None else shape, self.inner)

    @property
    def n_masks(self) -> int:
        """Lane masks at the end of each record: one per batch level."""
        return (self.batch is not None) + len(self.inner)

    @property
    def fields(self) -> tuple:
        """The residuals without the lane masks."""
        return self.res_avals[:len(self.res_avals) - self.n_masks]

    def with_fields(self, fields) -> "TapeAval":
        """A tape of the same batching and stacking with other residuals (the masks, if
        any, stay last)."""
        masks = self.res_avals[len(self.res_avals) - self.n_masks:]
        return TapeAval(tuple(fields) + masks, self.batch, self.shape, self.inner)

    def same_type(self, other) -> bool:
        return (isinstance(other, TapeAval) and self.res_avals == other.res_avals
                and self.batch == other.batch and self.shape == other.shape and self.inner == other.inner)

    def __eq__(self, other):
        return self.same_type(other)

    def __hash__(self):
        return hash((self.res_avals, self.batch, self.shape, self.inner))

    def strip_weak_type(self):
        return self

    def unbatched(self) -> "TapeAval":
        """The per-example view of a batched tape (drop this level's axis and mask)."""
        if self.batch is None:
            return self
        return TapeAval([a.unbatched() if isinstance(a, TapeAval) else ShapedArray(a.shape[1:], a.dtype)
                         for a in self.res_avals[:-1]], self.inner[-1] if self.inner else None, self.shape,
                        self.inner[:-1])

    def __repr__(self):
        return f"TapeAval({self.str_short()})"


def check_tape_aval(op: str, name: str, aval) -> TapeAval:
    """``aval`` if it is a well-formed tape type (a param of a tape primitive)."""
    if not isinstance(aval, TapeAval):
        raise TypeError(f"{op}: {name} must be a tape type, got {type(aval).__name__}")
    todo = [aval]
    while todo:
        a = todo.pop()
        levels = a.inner + ((a.batch,) if a.batch is not None else ())
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in levels) or (
                a.inner and a.batch is None) or a.n_masks > len(a.res_avals):
            raise TypeError(f"{op}: {name} {aval.str_short()} is not a well-formed tape type")
        todo.extend(r for r in a.res_avals if isinstance(r, TapeAval))
    return aval


# --- run-time values (eager) -------------------------------------------------------------------

class Tape:
    """Run-time value of a TapeAval: a list of per-iteration residual tuples."""

    __slots__ = ("entries", "aval")

    def __init__(self, entries, aval: TapeAval):
        self.entries = entries
        self.aval = aval

    def __repr__(self):
        if self.entries is None:
            return f"Tape(zeros of {self.aval.str_short()})"
        return f"Tape({len(self.entries)} iterations of {self.aval.str_short()})"

    def records(self, n: int):
        """The records; a zero tape (``entries is None``, a tangent known to be zero)
        gives ``n`` records of zeros."""
        if self.entries is not None:
            return self.entries
        zeros = tuple(zero_value(a) for a in self.aval.res_avals)
        return [zeros] * n


class TapeStack:
    """Run-time value of a stacked TapeAval: one Tape per iteration of a scan."""

    __slots__ = ("tapes", "aval")

    def __init__(self, tapes, aval):
        self.tapes, self.aval = list(tapes), aval

    def __getitem__(self, i):
        return self.tapes[i]


def zero_value(aval):
    """A concrete zero of ``aval``: an array, a zero tape, or a stack of zero tapes."""
    if not isinstance(aval, TapeAval):
        return np.zeros(aval.shape, aval.dtype)
    if aval.shape:
        inner = aval.update(shape=aval.shape[1:])
        return TapeStack([zero_value(inner) for _ in range(aval.shape[0])], aval)
    return Tape(None, aval)


def tape_length(tapes) -> int:
    """Records in each of ``tapes`` (zero tapes take the others' length)."""
    lengths = {len(t.entries) for t in tapes if t.entries is not None}
    if len(lengths) > 1:
        raise ValueError(f"tapes of different lengths {sorted(lengths)}")
    return lengths.pop() if lengths else 0


def tape_aval_of(x) -> TapeAval:
    """The TapeAval of a tape value (a run-time Tape or a tracer of one)."""
    return x.aval if isinstance(x, Tape) else get_aval_any(x)


def is_tape(x) -> bool:
    return isinstance(get_aval_any(x), TapeAval)


def split_tape_avals(aval: TapeAval, n: int):
    """The types of a tape cut after its first ``n`` fields (the masks go to both)."""
    return aval.with_fields(aval.fields[:n]), aval.with_fields(aval.fields[n:])


def zip_avals(a: TapeAval, b: TapeAval) -> TapeAval:
    return a.with_fields(a.fields + b.fields)


def entry_parts(entry, n_masks: int):
    """(fields, lane masks) of a record: a vmapped tape's records end with one mask per level."""
    cut = len(entry) - n_masks
    return list(entry[:cut]), list(entry[cut:])


def _closed(fun_flat, in_avals) -> ClosedJaxpr:
    jaxpr, consts = trace_to_jaxpr(fun_flat, list(in_avals))
    return ClosedJaxpr(jaxpr, consts)


# --- while_tape: the forward loop, recording each iteration's residuals -----------------------

while_tape_p = Primitive("while_tape", multiple_results=True)
while_tape_p.jaxpr_params = ("cond_jaxpr", "body_jaxpr")


@while_tape_p.def_impl
def _while_tape_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, tape_aval):
    cc, bc, carry = while_parts(args, cond_nconsts, body_nconsts)
    nk = len(carry)
    entries = []
    while bool(eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cc, *carry)[0]):
        out = eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *bc, *carry)
        carry, res = out[:nk], out[nk:]
        entries.append(tuple(res))
    return list(carry) + [Tape(entries, tape_aval)]


@while_tape_p.def_abstract_eval
def _while_tape_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, tape_aval):
    carry, res = check_while("while_tape", avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
    check_tape_aval("while_tape", "tape_aval", tape_aval)
    if tape_aval.shape or not _same(res, tape_aval.res_avals):
        raise TypeError(f"while_tape: the body's residuals {[a.str_short() for a in res]} do not match "
                        f"tape_aval {tape_aval.str_short()}")
    return [a.strip_weak_type() for a in carry] + [tape_aval]


# --- tape_apply: the linear part replayed over the records ------------------------------------

tape_apply_p = Primitive("tape_apply", multiple_results=True)
tape_apply_p.jaxpr_params = ("body",)


@tape_apply_p.def_impl
def _tape_apply_impl(tape, *args, body, num_consts, reverse, linear):
    consts, carry = args[:num_consts], list(args[num_consts:])
    records = tape.entries if tape.entries is not None else []  # a zero tape has no records of its own
    entries = reversed(records) if reverse else records
    for res in entries:
        carry = eval_jaxpr(body.jaxpr, body.consts, *res, *consts, *carry)
    return carry


@tape_apply_p.def_abstract_eval
def _tape_apply_abstract_eval(tape, *avals, body, num_consts, reverse, linear):
    if not isinstance(tape, TapeAval) or tape.shape:
        raise TypeError(f"tape_apply: first operand must be a tape, got {tape.str_short()}")
    check_closed("tape_apply", "body", body)
    num_consts = check_count("tape_apply", "num_consts", num_consts, 0, len(avals))
    carry = list(avals[num_consts:])
    # The body reads each record (every field, the lane masks too), then the consts and carry.
    check_sub_inputs("tape_apply", "body", body, list(tape.res_avals) + list(avals))
    if not _same(body.out_avals, carry):
        raise TypeError("tape_apply: the body must return the carry type it received")
    return [a.strip_weak_type() for a in carry]


# --- tape_split / tape_zip: records cut in two / put side by side ------------------------------

tape_split_p = Primitive("tape_split", multiple_results=True)


@tape_split_p.def_impl
def _tape_split_impl(tape, *, n):
    masked = tape.aval.n_masks
    a_aval, b_aval = split_tape_avals(tape.aval, n)
    if tape.entries is None:
        return [Tape(None, a_aval), Tape(None, b_aval)]
    a, b = [], []
    for e in tape.entries:
        res, mask = entry_parts(e, masked)
        a.append(tuple(res[:n] + mask))
        b.append(tuple(res[n:] + mask))
    return [Tape(a, a_aval), Tape(b, b_aval)]


@tape_split_p.def_abstract_eval
def _tape_split_abstract_eval(tape, *, n):
    if not isinstance(tape, TapeAval):
        raise TypeError(f"tape_split: the operand must be a tape, got {tape.str_short()}")
    n = check_count("tape_split", "n", n, 0, len(tape.fields))
    return list(split_tape_avals(tape, n))


tape_zip_p = Primitive("tape_zip")


@tape_zip_p.def_impl
def _tape_zip_impl(a, b):
    masked = a.aval.n_masks
    if a.entries is None and b.entries is None:
        return Tape(None, zip_avals(a.aval, b.aval))
    n = tape_length([a, b])
    entries = []
    for ea, eb in zip(a.records(n), b.records(n)):
        ra, mask = entry_parts(ea, masked)
        rb, _ = entry_parts(eb, masked)
        entries.append(tuple(ra + rb + mask))
    return Tape(entries, zip_avals(a.aval, b.aval))


@tape_zip_p.def_abstract_eval
def _tape_zip_abstract_eval(a, b):
    # Records are read side by side and the masks kept once: the tapes must be stacked
    # and batched alike.
    if not (isinstance(a, TapeAval) and isinstance(b, TapeAval)) or (a.batch, a.shape, a.inner) != (
            b.batch, b.shape, b.inner) or a.res_avals[len(a.fields):] != b.res_avals[len(b.fields):]:
        raise TypeError(f"tape_zip: operands must be tapes stacked and batched alike, got {a.str_short()} "
                        f"and {b.str_short()}")
    return zip_avals(a, b)


# --- tape_empty / tape_zeros: tapes made from nothing --------------------------------------------

# An empty tape: the placeholder a cond branch outputs in another branch's tape slot.
tape_empty_p = Primitive("tape_empty")
tape_empty_p.def_impl(lambda *, aval: Tape([], aval))
tape_empty_p.def_abstract_eval(lambda *, aval: check_tape_aval("tape_empty", "aval", aval))

# A zero tape (an instantiated symbolic-zero tangent or cotangent of a tape).
tape_zeros_p = Primitive("tape_zeros")
tape_zeros_p.def_impl(lambda *, aval: zero_value(aval))
tape_zeros_p.def_abstract_eval(lambda *, aval: check_tape_aval("tape_zeros", "aval", aval))


# --- tape_scan: a loop over the records of tapes, with a carry and per-record outputs ----------
#   tape_scan(tape_1 .. tape_m, consts, carry; body) -> (carry', ys_tape)
# iterates over the records of the tapes (all of one length) forwards or backwards;
# ``body(fields of record i of every tape, consts, carry) -> (carry', ys_i)``; ``ys_i``
# become record ``i`` of a new tape (records stay in index order whatever the direction).

tape_scan_p = Primitive("tape_scan", multiple_results=True)
tape_scan_p.jaxpr_params = ("body",)


def scan_parts(args, num_tapes, num_consts):
    """(tapes, consts, carry) of a tape_scan's operands."""
    return list(args[:num_tapes]), list(args[num_tapes:num_tapes + num_consts]), list(args[num_tapes + num_consts:])


def field_avals(tape_avals):
    """The fields of one record of each of the tapes, in order."""
    return [a for t in tape_avals for a in t.res_avals]


def _same(xs, ys) -> bool:
    return len(xs) == len(ys) and all(a.same_type(b) for a, b in zip(xs, ys))


@tape_scan_p.def_impl
def _tape_scan_impl(*args, body, num_tapes, num_consts, reverse, linear, ys_aval):
    tapes, consts, carry = scan_parts(args, num_tapes, num_consts)
    n = tape_length(tapes)
    records = [t.records(n) for t in tapes]
    nk = len(carry)
    ys = [()] * n
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        fields = [f for r in records for f in r[i]]
        out = eval_jaxpr(body.jaxpr, body.consts, *fields, *consts, *carry)
        carry, ys[i] = list(out[:nk]), tuple(out[nk:])
    return carry + ([Tape(ys, ys_aval)] if ys_aval is not None else [])


@tape_scan_p.def_abstract_eval
def _tape_scan_abstract_eval(*avals, body, num_tapes, num_consts, reverse, linear, ys_aval):
    check_closed("tape_scan", "body", body)
    num_tapes = check_count("tape_scan", "num_tapes", num_tapes, 1, len(avals))
    num_consts = check_count("tape_scan", "num_consts", num_consts, 0, len(avals) - num_tapes)
    tapes, consts, carry = scan_parts(avals, num_tapes, num_consts)
    if not all(isinstance(t, TapeAval) for t in tapes):
        raise TypeError(
            f"tape_scan: the first {num_tapes} operands must be tapes, got {[t.str_short() for t in tapes]}"
        )
    if len({t.shape for t in tapes}) != 1:  # (batching may differ: nested vmaps)
        raise TypeError("tape_scan: tapes stacked differently")
    want = field_avals(tapes) + list(consts + carry)
    got = list(body.in_avals)
    if not _same(want, got):
        raise TypeError(
            f"tape_scan: body takes {[a.str_short() for a in got]}, operands are {[a.str_short() for a in want]}"
        )
    nk = len(carry)
    outs = [a.strip_weak_type() for a in body.out_avals]
    if len(outs) < nk or not _same(outs[:nk], carry):
        raise TypeError("tape_scan: the body must return the carry type it received")
    if ys_aval is not None and check_tape_aval("tape_scan", "ys_aval", ys_aval).shape != tapes[0].shape:
        raise TypeError("tape_scan: ys_aval must be stacked as the tapes scanned")
    if (ys_aval is None and len(outs) != nk) or (ys_aval is not None and not _same(ys_aval.res_avals, outs[nk:])):
        raise TypeError("tape_scan: ys_aval does not match the body's per-record outputs")
    return outs[:nk] + ([ys_aval] if ys_aval is not None else [])


def tape_scan(tapes, consts, carry, body: ClosedJaxpr, *, reverse: bool, linear, ys_aval):
    return tape_scan_p.bind(*tapes, *consts, *carry, body=body, num_tapes=len(tapes), num_consts=len(consts),
                            reverse=reverse, linear=tuple(linear), ys_aval=ys_aval)


# --- core's per-aval-type tables, for tapes ---------------------------------------------------

def _add_tapes(a, b):
    """The sum of two (co)tangent tapes, record by record."""
    aval = tape_aval_of(a)
    if aval.shape:
        raise NotImplementedError("adding stacks of tapes is not supported yet")
    from funcgrad.core import lax_api as lax  # (lax_api needs every primitive declared)

    n = len(aval.res_avals)
    body = _closed(lambda *xs: [lax.add(x, y) for x, y in zip(xs[:n], xs[n:])], list(aval.res_avals) * 2)
    (out,) = tape_scan([a, b], [], [], body, reverse=False, linear=(True, True), ys_aval=aval)
    return out


def _batched_tape_aval(aval: TapeAval, size: int) -> TapeAval:
    """A batched tape: every field gains the axis and each record ends with the lanes'
    "still running" mask."""
    inner = aval.inner + ((aval.batch,) if aval.batch is not None else ())
    return TapeAval(
        [batch_util.batched_aval(a, size) for a in aval.res_avals] + [ShapedArray((size,), np.dtype(np.bool_))],
        batch=size,
        shape=aval.shape,
        inner=inner,
    )


# A run-time tape holds float residuals: its tangent is a tape of their tangents
# (higher-order derivatives through a staged while_loop).
ad_util.differentiable_avals.add(TapeAval)
ad_util.aval_zeros[TapeAval] = lambda aval: tape_zeros_p.bind(aval=aval)
ad_util.aval_adders[TapeAval] = _add_tapes
batch_util.aval_batchers[TapeAval] = _batched_tape_aval
# A tape's bdim is a flag; a stacked tape's shape is the enclosing scan's.
batch_util.aval_batch_sizes[TapeAval] = lambda aval, bdim: aval.batch
cf_prims.stack_rules[TapeAval] = TapeStack
