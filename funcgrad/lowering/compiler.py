"""ClosedJaxpr -> one LLVM module with one entry point -> native code.

Pipeline: ``simplify`` (CSE, DCE) -> ``plan`` (which values get a buffer: fusion
decisions and liveness-based workspace offsets) -> ``emit`` (one walk over the
equations, dispatching through ``lower_rules``; in a program of many loop nests each
top-level equation's code becomes a function of its own, shared by the equations emitting
the same code: ``units.py``) -> ``engine.compile_ir``.

Fusion: view rules (elementwise, broadcast, reshape, ...) are fused into whatever
loop consumes them. A value gets a buffer only if it is an output, the result of a
materialising rule (reduction, dot_general, ...), or an expensive fused value needed
by more than one loop ("root"); cheap values are recomputed in each loop instead.
"""
from __future__ import annotations

import functools
import math
from collections import defaultdict

import numpy as np

from funcgrad.core.ir import Jaxpr, JaxprPrinter, Literal, Var
from funcgrad.core.primitive import lower_rules
from funcgrad.core.prims.dot import dot_general_p
from funcgrad.core.prims.effects import eqn_has_effects
from funcgrad.core.prims.structural import broadcast_in_dim_p, transpose_p
from funcgrad.errors import LoweringError
from funcgrad.lowering import algebra, units
from funcgrad.lowering.builder import SUPPORTED_DTYPES, FunctionBuilder, ModuleBuilder
from funcgrad.lowering.context import (
    CHEAP_PRIMS,
    COMPLEX_LOWERED,
    FLAT_PRIMS,
    VIEW_PRIMS,
    BufferOperand,
    ConstOperand,
    LoweringContext,
)
from funcgrad.lowering.dot import gemm_reads_in_place
from funcgrad.lowering.index_paths import IndexPaths
from funcgrad.lowering.interrupt import STATUS as INTERRUPTED
from funcgrad.lowering.unit_keys import region_key
from funcgrad.lowering.workspace import RELEASE_WORKSPACE, give_back_workspace, pack_buffers
from funcgrad.tapes import TapeAval

ALIGN = 64
STACK_WORKSPACE_LIMIT = 64 * 1024  # larger workspaces come from malloc
# A heap workspace this large is kept between calls (one per compiled module, taken and
# given back atomically, so concurrent calls stay safe: a call finding it taken mallocs
# its own). malloc serves such sizes with fresh mmap'd pages, whose page faults cost more
# than the work on them (2x for random.normal at 10^7); released with the module.
CACHED_WORKSPACE_MIN = 1 << 20
GIL_RELEASE_WORK = 100_000  # release the GIL around native work bigger than this
# Fused view rules compute an element by calling their operands' ``at`` (a few Python
# frames per equation): a value fused deeper than this below the loop evaluating it gets a
# buffer instead, so emission recursion stays bounded whatever the program's length (a
# store and a load per this many operations: nothing next to the operations themselves).
MAX_FUSED_DEPTH = 48


# --- simplification ----------------------------------------------------------------------
def _atom_key(a):
    if type(a) is Literal:
        arr = np.asarray(a.val, dtype=a.aval.dtype)
        return ("lit", arr.dtype.str, arr.tobytes())  # bytes: 0.0 and -0.0 differ
    return id(a)  # (a variable: an int, never equal to a literal's tuple)


def _has_effects(e) -> bool:
    """``eqn_has_effects`` without its call for the common primitive that has no effect
    flag and no sub-programs (the passes below ask once per equation)."""
    p = e.primitive
    return (p.jaxpr_params or getattr(p, "effectful", None) is not None) and eqn_has_effects(e)


_new_eqn = tuple.__new__  # Eqn(...) without NamedTuple's Python-level __new__/_replace


def dce(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` without the equations nothing reads (``jaxpr`` itself if there are none);
    equations with effects (``eqn_has_effects``) and without outputs always stay."""
    live = {id(v) for v in jaxpr.outvars if type(v) is Var}
    kept = []
    for e in reversed(jaxpr.eqns):
        outs = e.outputs
        if not outs or any([id(o) in live for o in outs]) or _has_effects(e):
            kept.append(e)
            live.update([id(a) for a in e.inputs if type(a) is Var])
    if len(kept) == len(jaxpr.eqns):
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, kept[::-1], jaxpr.outvars)


def simplify(jaxpr: Jaxpr, consts=None) -> Jaxpr:
    """Dead-code elimination, algebraic rewrites (``lowering/algebra.py``; ``consts``: the
    constvars' values, if known), common-subexpression elimination, then dead-code
    elimination again (equations with effects, ``eqn_has_effects``, are neither merged
    nor removed). The first DCE is a cheap reverse walk that spares the rewrites and CSE
    the dead equations tracing leaves: 400 of the 503 of the 50-op W10 function (its
    Python code builds all five candidate expressions per step and keeps one), and a
    ``grad`` program's unused primal work."""
    jaxpr = algebra.rewrite(dce(jaxpr), consts)
    subst: dict[int, object] = {}
    get = subst.get
    seen: dict = {}
    eqns = []
    for e in jaxpr.eqns:
        ins = [get(id(a), a) if type(a) is Var else a for a in e.inputs]
        key = None
        prim = e.primitive
        if e.outputs and prim in lower_rules and not _has_effects(e):  # (effects never merge)
            params = e.params
            try:
                key = (prim, tuple([_atom_key(a) for a in ins]),
                       tuple(sorted(params.items())) if params else ())
                hash(key)
            except TypeError:
                key = None
        if key is not None:
            prev = seen.get(key)
            if prev is not None:
                for o, p in zip(e.outputs, prev):
                    subst[id(o)] = p
                continue
            seen[key] = e.outputs
        if subst and any([a is not b for a, b in zip(ins, e.inputs)]):
            e = _new_eqn(type(e), (prim, ins, e.outputs, e.params, e.source_info))
        eqns.append(e)
    outvars = [get(id(v), v) if type(v) is Var else v for v in jaxpr.outvars]
    return dce(Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, outvars))


# --- errors -----------------------------------------------------------------------------------
def lowering_error(jaxpr: Jaxpr, index: int, why: str, source_info=None) -> LoweringError:
    """A LoweringError showing equation ``index`` among its neighbours."""
    printer = JaxprPrinter()
    lines = printer.jaxpr(jaxpr).split("\n")
    at = index + 1  # line 0 is the "{ lambda" header
    lo, hi = max(1, at - 3), min(len(lines) - 1, at + 3)
    shown = [("--> " if i == at else "    ") + lines[i] for i in range(lo, hi)]
    eqn_text = printer.eqn(jaxpr.eqns[index], 0).strip()
    first = why.splitlines()[0] if why else ""
    msg = (f"cannot compile equation {index} ({jaxpr.eqns[index].primitive.name}): {first}\n    {eqn_text}\n"
           f"{why}\nin context:\n" + "\n".join(shown))
    if source_info is not None:
        msg += f"\nfrom {getattr(source_info, 'filename', '?')}:{getattr(source_info, 'lineno', '?')}"
    return LoweringError(msg)


def check_supported(jaxpr: Jaxpr, sub: bool = False) -> None:
    """Raise LoweringError if ``jaxpr`` (and the sub-jaxprs of its control flow) uses a
    primitive without a lower rule or an unsupported dtype."""
    from funcgrad.lowering.control_flow import sub_jaxprs
    from funcgrad.lowering.tapes import tape_positions

    # (a sub-jaxpr may take and return tapes: its equation's rule handles them)
    for a in list(jaxpr.invars) + list(jaxpr.constvars):
        if np.dtype(a.aval.dtype) not in SUPPORTED_DTYPES and not (sub and isinstance(a.aval, TapeAval)):
            raise LoweringError(f"cannot compile a jaxpr with an input of type {a.aval.str_short()}")
    for a in jaxpr.outvars:
        if np.dtype(a.aval.dtype) not in SUPPORTED_DTYPES and not (sub and isinstance(a.aval, TapeAval)):
            hint = " (a tape must be consumed where it is made)" if isinstance(a.aval, TapeAval) else ""
            raise LoweringError(f"cannot compile a jaxpr with an output of type {a.aval.str_short()}{hint}")
    for i, e in enumerate(jaxpr.eqns):
        if e.primitive not in lower_rules:
            raise lowering_error(
                jaxpr, i,
                f"primitive '{e.primitive.name}' has no lower rule (funcgrad.lowering supports "
                "elementwise, layout, reduction, dot_general, indexing and control-flow primitives; "
                "jit falls back to the evaluator for the rest)", e.source_info)
        tape_in, tape_out = tape_positions(e)
        atoms = [(v, k in tape_out) for k, v in enumerate(e.outputs)]
        atoms += [(a, k in tape_in) for k, a in enumerate(e.inputs) if isinstance(a, (Var, Literal))]
        for v, tape_ok in atoms:
            if tape_ok and isinstance(v.aval, TapeAval):
                continue
            if isinstance(v.aval, TapeAval):
                raise lowering_error(jaxpr, i, f"a run-time tape ({v.aval.str_short()}) in this position of "
                                     f"'{e.primitive.name}' is not lowered (e.g. as a loop carry)",
                                     e.source_info)
            if np.dtype(v.aval.dtype) not in SUPPORTED_DTYPES:
                raise lowering_error(jaxpr, i, f"dtype {v.aval.dtype} is not supported by compiled code", e.source_info)
            if np.dtype(v.aval.dtype).kind == "c" and e.primitive not in COMPLEX_LOWERED:
                raise lowering_error(jaxpr, i, f"'{e.primitive.name}' on complex values ({v.aval.str_short()}) "
                                     "is not compiled: jit runs this program with the evaluator", e.source_info)
        for what, sub_closed in sub_jaxprs(e):
            try:
                check_supported(sub_closed.jaxpr, sub=True)
            except LoweringError as err:
                raise lowering_error(jaxpr, i, f"in its {what}: {err}", e.source_info) from None


# --- planning ------------------------------------------------------------------------------------
class Plan:
    def __init__(self):
        self.materialized: set[int] = set()
        self.roots: dict[int, set] = {}
        self.offsets: dict[int, int] = {}  # workspace offset of each intermediate buffer
        # values given a buffer only as a gemm operand: written on the calling thread, as
        # the gemm's own packing was (a cheap 10^4-element map is not worth the pool)
        self.gemm_packed: set[int] = set()
        self.workspace_bytes = 0


def _size(aval) -> int:
    # (math.prod of the shape's ints: ``plan`` asks several times per equation, and
    # ``np.prod`` costs microseconds a call)
    shape = getattr(aval, "shape", None)
    return 1 if shape is None else int(math.prod(shape))


def _nbytes(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


def _packed_for_gemm(e, v, readers, eqns) -> bool:
    """Is ``v`` (a fused value made by ``e``) an operand a gemm call would pack into
    scratch memory where it lies (``dot.gemm_reads_in_place``)? Then it gets a buffer:
    one pass computes it, and the gemm and any other reader share it. (An identity
    broadcast or transpose is its operand itself, already in memory: left fused.)"""
    prim, ndim = e.primitive, len(v.aval.shape)
    if (prim is broadcast_in_dim_p and tuple(e.inputs[0].aval.shape) == tuple(v.aval.shape)) or \
            (prim is transpose_p and tuple(e.params["permutation"]) == tuple(range(ndim))):
        return False
    for c in readers:
        r = eqns[c]
        if r.primitive is dot_general_p:
            for pos, a in enumerate(r.inputs):
                if a is v and gemm_reads_in_place(r, pos):
                    return True
    return False


def plan(jaxpr: Jaxpr, lazy_outs=frozenset()) -> Plan:
    """``lazy_outs``: ids of outvars the caller reads as operands after the last
    equation (0-d values of control-flow bodies kept in registers) instead of having
    them written into a destination buffer."""
    p = Plan()
    eqns = jaxpr.eqns
    n = len(eqns)
    consumers: dict[int, list] = defaultdict(list)
    for i, e in enumerate(eqns):
        for vid in {id(a) for a in e.inputs if isinstance(a, Var)}:
            consumers[vid].append(i)
    outset = {id(v) for v in jaxpr.outvars if isinstance(v, Var) and id(v) not in lazy_outs}
    _END = ("end",)  # a root evaluated after the last equation
    produced_at: dict[int, int] = {}
    for i, e in enumerate(eqns):
        for v in e.outputs:
            produced_at[id(v)] = i

    # Fusion decisions, from the last equation back: a value's roots are the loops
    # that will evaluate it. ``trips``: how many times the loops evaluating a value run
    # its code (a materialised value's loop also runs over its operands: packing, reducing).
    trips: dict[int, int] = {}
    index_paths = IndexPaths(eqns, consumers, p.materialized, produced_at)
    depth: dict[int, int] = {}  # fused view equations between a value and its loops' roots
    for i in reversed(range(n)):
        e = eqns[i]
        for v in e.outputs:
            vid = id(v)
            if e.primitive not in VIEW_PRIMS or vid in outset:
                p.materialized.add(vid)
                p.roots[vid] = {vid}
                depth[vid] = 0
                trips[vid] = max([_size(v.aval)] + [_size(a.aval) for a in e.inputs
                                                    if not isinstance(a.aval, TapeAval)])
                continue
            rs: set = {_END} if vid in lazy_outs else set()
            t = _size(v.aval)
            d = 1
            for c in consumers[vid]:
                if not eqns[c].outputs:  # an effect (no outputs) evaluates it in place
                    rs.add(("eqn", c))
                    continue
                u = eqns[c].outputs[0]
                rs |= p.roots[id(u)] if id(u) not in p.materialized else {id(u)}
                t = max(t, trips.get(id(u), 0))
                d = max(d, depth.get(id(u), 0) + 1)
            trips[vid] = t
            depth[vid] = d
            # An expensive value read by several loops, or broadcast into a loop over
            # more elements than it has (exp of a row inside a matrix loop), is computed
            # once into a buffer instead; so is one a loop reads at too many positions
            # (``index_paths.py``: its code would be emitted once per position).
            cheap = e.primitive in CHEAP_PRIMS
            many = len(rs) > 1 or (t > 2 * _size(v.aval) > 2)
            shared = (many and not cheap) or d > MAX_FUSED_DEPTH
            shared = index_paths.too_many(v, e, vid in lazy_outs, cheap) or shared
            if not shared and _packed_for_gemm(e, v, consumers[vid], eqns):
                p.gemm_packed.add(vid)
            if shared or vid in p.gemm_packed:
                p.materialized.add(vid)
                rs = {vid}
                trips[vid] = _size(v.aval)
                depth[vid] = 0
            p.roots[vid] = rs

    # Liveness of intermediate buffers (in equation positions), then greedy packing.
    def root_pos(r):
        return r[1] if type(r) is tuple and len(r) == 2 else produced_at.get(r, n)

    intervals = []
    for i, e in enumerate(eqns):
        for v in e.outputs:
            vid = id(v)
            if vid not in p.materialized or vid in outset:
                continue
            end = n if vid in lazy_outs else i
            for c in consumers[vid]:
                if not eqns[c].outputs:
                    end = max(end, c)
                    continue
                u = id(eqns[c].outputs[0])
                end = max([end, c] + [root_pos(r) for r in p.roots.get(u, ())])
            intervals.append((i, end, vid, _nbytes(v.aval)))
    p.offsets, p.workspace_bytes = pack_buffers(intervals, ALIGN)
    return p


def fusion_text(jaxpr: Jaxpr, p: Plan) -> str:
    """The fusion plan of ``jaxpr`` as text (``FUNCGRAD_DUMP_JAXPR``): one block per loop
    nest, i.e. per equation whose result gets a buffer, listing the equations fused into
    it. A cheap fused value read by several nests is recomputed in each, so it is listed
    under each. Variable names match ``str(jaxpr)``."""
    printer = JaxprPrinter()
    printer.jaxpr(jaxpr)  # number the variables as the jaxpr printout does
    fused_into: dict = defaultdict(list)  # root id -> fused equations, in program order
    heads = []
    for e in jaxpr.eqns:
        if e.outputs and id(e.outputs[0]) not in p.materialized:
            for r in p.roots.get(id(e.outputs[0]), ()):
                fused_into[r].append(e)
        else:
            heads.append(e)
    blocks = []
    for k, e in enumerate(heads, 1):
        outs = " ".join(printer.binder(v) for v in e.outputs) or "_"
        members = fused_into.get(id(e.outputs[0]), []) if e.outputs else []
        lines = [f"nest {k}: {e.primitive.name} -> {outs}"]
        lines += [printer.eqn(m, 4) for m in members + [e]]
        blocks.append("\n".join(lines))
    after = [printer.eqn(m, 4) for m in fused_into.get(("end",), [])]
    if after:
        blocks.append("\n".join(["after the last nest (read by the caller):"] + after))
    n_buffers = sum(1 for vid in p.materialized if vid in p.offsets)
    blocks.append(f"{len(jaxpr.eqns)} equations in {len(heads)} nests; {n_buffers} intermediate buffers, "
                  f"{p.workspace_bytes} bytes of workspace")
    return "\n".join(blocks)


# --- emission -------------------------------------------------------------------------------------
def const_array(aval, value) -> np.ndarray:
    """The C-contiguous array of ``aval``'s dtype the code reads for the constant ``value``."""
    return np.asarray(value, dtype=aval.dtype, order="C")  # (ascontiguousarray makes 0-d 1-d)


def const_operand(ctx, aval, value, src: int | None = None):
    """An operand for a constant array: 0-d values fold into the code, others are the
    external global ``@fg_const<k>``, bound when the code is linked to the address of a
    C-contiguous copy that the executable keeps alive (``ctx.keep[k]``). The IR text
    holds no addresses, so the same program compiles to the same object in every
    process (the disk cache relies on it)."""
    arr = const_array(aval, value)
    if arr.shape != tuple(aval.shape):
        raise LoweringError(f"constant of shape {arr.shape} bound to {aval.str_short()}")
    if arr.ndim == 0:
        return ConstOperand(aval, arr[()])
    name = const_symbol(len(ctx.keep))
    if src is not None:
        ctx.keep_src[len(ctx.keep)] = src
    ctx.keep.append(arr)
    ctx.b.module.declare(name, f"@{name} = external global i8")
    return BufferOperand(ctx, aval, f"@{name}")


def const_symbol(k: int) -> str:
    return f"fg_const{k}"


def emit_jaxpr(ctx, jaxpr: Jaxpr, consts, in_ops, out_dests, p: Plan | None = None, base: str | None = None,
               top: bool = False):
    """Emit ``jaxpr``'s equations at the builder's current position.

    ``in_ops``: an operand per invar; ``consts``: values of the constvars.
    ``out_dests``: per outvar a ``BufferOperand`` to write the value into, or None to
    get the value back as an operand (for 0-d values kept in registers).
    ``p``/``base``: the buffer plan and its workspace base pointer (by default a plan
    is made here and its intermediates get a region of their own in the workspace).
    ``top``: these are the program's own constants (``ctx.keep_src`` records which
    ``@fg_const<k>`` each became, for ``program_cache``).
    Returns an operand per outvar (the destination buffer where one was given)."""
    b = ctx.b
    outliner = ctx.units if top else None  # (each top-level equation's code: a function of its own)
    if p is None:
        lazy = {id(v) for v, d in zip(jaxpr.outvars, out_dests) if d is None and isinstance(v, Var)}
        p = plan(jaxpr, lazy_outs=lazy)
    if base is None and p.workspace_bytes:
        base = ctx.workspace_region(p.workspace_bytes)
    env: dict[int, object] = {}
    for v, op in zip(jaxpr.invars, in_ops):
        env[id(v)] = op
    for j, (v, c) in enumerate(zip(jaxpr.constvars, consts)):
        env[id(v)] = const_operand(ctx, v.aval, c, src=j if top else None)

    dest_pos: dict[int, int] = {}
    for j, (v, d) in enumerate(zip(jaxpr.outvars, out_dests)):
        if d is not None and isinstance(v, Var) and id(v) in p.materialized and id(v) not in dest_pos:
            dest_pos[id(v)] = j

    def read(a):
        return ConstOperand(a.aval, a.val) if isinstance(a, Literal) else env[id(a)]

    def buffer_for(v):
        if id(v) in dest_pos:
            return out_dests[dest_pos[id(v)]]
        ctx.workspace_used()
        return BufferOperand(ctx, v.aval, b.emit(f"getelementptr inbounds i8, ptr {base}, i64 {p.offsets[id(v)]}"))

    flat_memo: dict[int, bool] = {}
    producer = {id(o): e for e in jaxpr.eqns for o in e.outputs}

    def fused_inputs(e) -> list:
        return [a for a in e.inputs if isinstance(a, Var) and id(a) in producer and id(a) not in p.materialized]

    def flat_ok(v) -> bool:
        """Can the fused region of the materialised value ``v`` run as one flat loop (no
        index remapping)? An explicit depth-first walk (regions may be long chains);
        ``flat_memo`` holds the verdict per value (a materialised value is never another
        region's fused input, so its own region's verdict is the only one it gets)."""
        stack = [(v, False)]
        while stack:
            u, expanded = stack.pop()
            if id(u) in flat_memo:
                continue
            e = producer[id(u)]
            if expanded:  # its fused inputs are decided
                flat_memo[id(u)] = all(flat_memo[id(a)] for a in fused_inputs(e))
                continue
            pred = FLAT_PRIMS.get(e.primitive)
            if pred is None or not pred(e):
                flat_memo[id(u)] = False
                continue
            stack.append((u, True))
            stack += [(a, False) for a in fused_inputs(e) if id(a) not in flat_memo]
        return flat_memo[id(v)]

    for i, e in enumerate(jaxpr.eqns):
        ctx.eqn = e
        ctx.out_aval = e.outputs[0].aval if e.outputs else None
        ops = [read(a) for a in e.inputs]
        rule = lower_rules[e.primitive]
        try:
            if e.primitive in VIEW_PRIMS:
                v = e.outputs[0]
                opnd = rule(ctx, *ops, **e.params)
                if id(v) in p.materialized:
                    dest = buffer_for(v)
                    flat, par = flat_ok(v), id(v) not in p.gemm_packed
                    write = functools.partial(ctx.write, dest, opnd, flat=flat, parallel=par)
                    if outliner is not None:
                        outliner.run(write, region_key(e, env, producer, p.materialized, [dest], (flat, par)))
                    else:
                        write()
                    ctx.work += math.prod(v.aval.shape)
                    opnd = dest
                env[id(v)] = opnd
            else:
                outs = ctx.outs = [None if isinstance(v.aval, TapeAval) else buffer_for(v) for v in e.outputs]
                lower = functools.partial(rule, ctx, *ops, **e.params)
                res = outliner.run(lower, region_key(e, env, producer, p.materialized, outs)) \
                    if outliner is not None else lower()
                ctx.work += sum([math.prod(o.shape) for o in ops if not isinstance(o.aval, TapeAval)])
                if res is not None:  # rules may return operands (e.g. a tape) in place of buffers
                    outs = res
                for v, o in zip(e.outputs, outs):
                    env[id(v)] = o
        except LoweringError as err:
            raise lowering_error(jaxpr, i, str(err), e.source_info) from None
    results = []
    for j, (a, d) in enumerate(zip(jaxpr.outvars, out_dests)):
        if d is None:
            results.append(read(a))
            continue
        if not (isinstance(a, Var) and dest_pos.get(id(a)) == j):
            ctx.write(d, read(a), flat=True)
        results.append(d)
    return results


def emit_core(closed, jaxpr: Jaxpr, p: Plan, module: ModuleBuilder):
    """Emit ``@fg_main_core(inputs..., outputs...)``; return (const arrays kept alive, work,
    workspace bytes, which program constant each kept array is: ``ctx.keep_src``)."""
    b = FunctionBuilder(module)
    b.interruptible = True  # (its loops poll the interrupt flag: interrupt.py)
    nin, nout = len(jaxpr.invars), len(jaxpr.outvars)
    temps = {"used": (p.workspace_bytes + ALIGN - 1) // ALIGN * ALIGN}

    def workspace(nbytes):
        temps["referenced"] = True
        off = temps["used"]
        temps["used"] = off + (nbytes + ALIGN - 1) // ALIGN * ALIGN
        # (in the core function, ahead of the unit asking: ``units.Outliner.before_unit``)
        gep = f"getelementptr inbounds i8, ptr %ws, i64 {off}"
        return ctx.units.before_unit(gep, "ptr") if ctx.units is not None else b.emit(gep)

    def referenced():
        temps["referenced"] = True

    def global_slot(nbytes):
        """Workspace for the whole call whose pointer is made in the prologue (so it
        dominates all code, including the exits)."""
        temps["referenced"] = True
        off = temps["used"]
        temps["used"] = off + (nbytes + ALIGN - 1) // ALIGN * ALIGN
        name = b.tmp()
        ctx.prologue.append(f"  {name} = getelementptr inbounds i8, ptr %ws, i64 {off}")
        return name

    ctx = LoweringContext(b, workspace)
    ctx.workspace_used = referenced
    ctx.global_slot = global_slot
    ctx.parallel_ok = True  # (control-flow bodies turn it off: parallel.py)
    nests = sum(1 for e in jaxpr.eqns if not e.outputs or id(e.outputs[0]) in p.materialized)
    ctx.units = units.Outliner(ctx) if units.OUTLINE and nests >= units.MIN_NESTS else None
    b.lines.append("entry:")
    setup = b.placeholder()
    b.start_block("start")
    prologue = b.placeholder()

    in_ops = [BufferOperand(ctx, v.aval, f"%a{k}") for k, v in enumerate(jaxpr.invars)]
    out_dests = [BufferOperand(ctx, a.aval, f"%o{j}") for j, a in enumerate(jaxpr.outvars)]
    emit_jaxpr(ctx, jaxpr, closed.consts, in_ops, out_dests, p=p, base="%ws", top=True)
    if ctx.units is not None:
        ctx.units.finish()
    keep = ctx.keep

    total = temps["used"]
    if total == 0 and temps.get("referenced"):  # only empty buffers: still needs a base
        total = ALIGN
    b.lines[prologue] = "\n".join(ctx.prologue)
    on_heap = total > STACK_WORKSPACE_LIMIT
    if ctx.cleanup or on_heap:
        module.declare("free", "declare void @free(ptr) nounwind")
    exits = [("", "ret i32 0")] + ([("fg_fail_oom:", "ret i32 2")] if ctx.fail_used else [])
    if b.interrupt_used:  # (an outlined nest that stopped early returns here: the flag says so)
        exits[0] = ("", "%fg_intr = load volatile i32, ptr @fg_interrupt, align 4\n"
                        "  %fg_intr_set = icmp ne i32 %fg_intr, 0\n"
                        f"  %fg_rc = select i1 %fg_intr_set, i32 {INTERRUPTED}, i32 0\n  ret i32 %fg_rc")
        exits.append(("fg_interrupted:", f"ret i32 {INTERRUPTED}"))
    if getattr(ctx, "cb_fail_used", False):  # a host callback raised (lowering/effects.py)
        exits.append(("fg_fail_cb:", "ret i32 3"))
    for label, ret in exits:
        if label:
            b.lines.append(label)
        for fn in ctx.cleanup:
            fn(b)
        if on_heap and total >= CACHED_WORKSPACE_MIN:
            b.stmt(give_back_workspace(b, label or "ret"))
        elif on_heap:
            b.stmt("call void @free(ptr %ws)")
        b.stmt(ret)
    if total == 0:
        b.lines[setup] = "  br label %start"
    elif not on_heap:
        b.lines[setup] = f"  %ws = alloca i8, i64 {total}, align {ALIGN}\n  br label %start"
    elif total < CACHED_WORKSPACE_MIN:
        module.declare("malloc", "declare noalias ptr @malloc(i64) nounwind")
        b.lines[setup] = (f"  %ws = call ptr @malloc(i64 {total})\n  %wsnull = icmp eq ptr %ws, null\n"
                          "  br i1 %wsnull, label %oom, label %start")
        b.lines.append("oom:\n  ret i32 2")
    else:
        module.declare("malloc", "declare noalias ptr @malloc(i64) nounwind")
        module.declare("fg_main_ws_cache", "@fg_main_ws_cache = internal global ptr null")
        module.functions.append(RELEASE_WORKSPACE)
        b.lines[setup] = (
            "  %wsc = atomicrmw xchg ptr @fg_main_ws_cache, ptr null acq_rel\n"
            "  %wshit = icmp ne ptr %wsc, null\n"
            "  br i1 %wshit, label %start, label %wsalloc\n"
            f"wsalloc:\n  %wsm = call ptr @malloc(i64 {total})\n  %wsnull = icmp eq ptr %wsm, null\n"
            "  br i1 %wsnull, label %oom, label %start")
        b.lines.append("oom:\n  ret i32 2")
        # %ws: the cached block or a fresh one (the phi heads the start block).
        start = b.lines.index("start:")
        b.lines.insert(start + 1, "  %ws = phi ptr [%wsc, %entry], [%wsm, %wsalloc]")
    params = [f"ptr noalias nocapture %a{k}" for k in range(nin)]
    params += [f"ptr noalias nocapture %o{j}" for j in range(nout)]
    module.functions.append(
        f"define internal i32 @fg_main_core({', '.join(params)}) noinline nounwind {{\n{b.text()}\n}}"
    )
    result = keep, ctx.work, total, ctx.keep_src
    ctx.__dict__.clear()  # (its closures above, its outliner refer to it: cycles, freed now)
    return result


from funcgrad.lowering import control_flow as _control_flow  # noqa: E402,F401  (registers its rules; uses this module)
from funcgrad.lowering import effects as _effects  # noqa: E402,F401  (registers its rule)
from funcgrad.lowering import sort as _sort  # noqa: E402,F401  (registers its rule)
