"""``export(jit(f))(*specs)`` -> ``Exported``; ``Exported.serialize`` / ``deserialize``.

An ``Exported`` is one input signature of a jitted function, staged and with its
call-like equations inlined (``lowering/inline.py``: jit calls, custom_jvp/custom_vjp
calls and checkpoints are replaced by their bodies, as compiled code runs them) so the
program holds no Python callable. ``call`` checks the arguments against the signature
and runs that program as a ``jit_call`` (compiled; ``vmap`` and ``jit`` of it work).

Derivatives follow ``jax.export``: reverse mode uses the *VJP program*, an exported
function ``(primals..., output cotangents...) -> input cotangents`` derived from the
function as traced (its custom rules included), not from the inlined program. In the
exporting process it is derived on demand, to any order; a deserialized ``Exported``
has the levels it was serialized with (``serialize(vjp_order=k)``), and reverse mode
beyond them raises ``ExportError``. Forward mode (``jvp``) differentiates the stored
program itself (funcgrad's ``custom_vjp`` differentiates the definition in forward
mode), where custom derivative rules are already inlined away.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core import pytree
from funcgrad.core.ad_util import tangent_aval
from funcgrad.core.avals import ShapedArray, is_python_scalar
from funcgrad.core.dtypes import canonicalize
from funcgrad.core.interpret import jaxpr_as_fun
from funcgrad.core.ir import ClosedJaxpr
from funcgrad.core.prims.calls import jit_call_p
from funcgrad.core.staging import trace_to_jaxpr
from funcgrad.core.trace import Tracer, get_aval_any
from funcgrad.errors import ExportError
from funcgrad.export import codec, trees, wire
from funcgrad.transforms.custom import custom_vjp
from funcgrad.transforms.jit import JittedFunction


class Exported:
    """One signature of a jitted function, ready to call, differentiate and serialize.

    Attributes (as ``jax.export.Exported``): ``fun_name``; ``in_tree`` (the structure
    of ``(args, kwargs)``; static arguments are baked in and not passed); ``in_avals``;
    ``out_tree``; ``out_avals``; and ``jaxpr``, the closed program that runs.
    """

    def __init__(self, fun_name, in_tree, out_tree, jaxpr: ClosedJaxpr, source=None, vjp=None):
        self.fun_name, self.in_tree, self.out_tree, self.jaxpr = fun_name, in_tree, out_tree, jaxpr
        self.in_avals, self.out_avals = tuple(jaxpr.in_avals), tuple(jaxpr.out_avals)
        self._source = source  # the program as traced (custom rules kept): derives the VJP
        self._vjp = vjp  # the next VJP level (derived or deserialized), or None
        self._call_fn = None

    def __repr__(self):
        sig = ", ".join(a.str_short() for a in self.in_avals)
        out = ", ".join(a.str_short() for a in self.out_avals)
        return f"Exported({self.fun_name}: ({sig}) -> ({out}), vjp levels: {self._vjp_levels_text()})"

    def _vjp_levels_text(self):
        n, e = 0, self
        while e._vjp is not None:
            n, e = n + 1, e._vjp
        return "any" if e._source is not None else str(n)

    # -- calling -----------------------------------------------------------------------------
    def call(self, *args, **kwargs):
        """Run the exported program on arguments of the exported structure, shapes and
        dtypes (a ``TypeError`` names the first argument that differs)."""
        leaves, tree = pytree.tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise TypeError(
                f"exported function {self.fun_name}: called with arguments of structure {tree}, but it was "
                f"exported for {self.in_tree} (args, kwargs)")
        checked = [self._check_leaf(x, a, p) for x, a, p in zip(leaves, self.in_avals, trees.args_paths(tree))]
        return pytree.tree_unflatten(self.out_tree, self._call_flat(checked))

    def _check_leaf(self, x, want: ShapedArray, path: str):
        if is_python_scalar(x) and want.shape == () and np.dtype(want.dtype).kind in _SCALAR_KINDS[type(x)]:
            return np.asarray(x, want.dtype)[()]  # a weak Python scalar takes the exported dtype
        try:
            got = get_aval_any(x)
        except TypeError as e:
            raise TypeError(f"exported function {self.fun_name}: argument {path}: {e}") from None
        if not got.same_type(want):
            raise TypeError(
                f"exported function {self.fun_name}: argument {path} is {got.str_short()}, but the function was "
                f"exported for {want.str_short()} (shape {want.shape}, dtype {want.dtype.name}); export it again "
                "for the new shape or dtype")
        return x

    def _call_flat(self, leaves) -> list:
        fn = self._call_fn
        if fn is None:
            fn = self._call_fn = self._differentiable_call()
        return list(fn(*leaves))

    def _differentiable_call(self):
        n = len(self.in_avals)

        def primal(*xs):
            return tuple(jit_call_p.bind(*xs, jaxpr=self.jaxpr, name=self.fun_name))

        primal.__name__ = self.fun_name

        def fwd(*xs):
            self.vjp()  # (raises here, in the forward pass, when there is no VJP)
            return primal(*xs), xs

        def bwd(res, cts):
            vjp = self.vjp()
            cts = [_as_type(c, a) for c, a in zip(cts, vjp.in_avals[n:])]
            return tuple(vjp._call_flat(list(res) + cts))

        f = custom_vjp(primal)
        f.defvjp(fwd, bwd)
        return f

    # -- derivatives --------------------------------------------------------------------------
    def has_vjp(self) -> bool:
        return self._vjp is not None or self._source is not None

    def vjp(self) -> "Exported":
        """The VJP program: ``(*primals, *output cotangents) -> input cotangents`` (flat)."""
        if self._vjp is None:
            if self._source is None:
                raise ExportError(
                    f"exported function {self.fun_name} has no VJP: it was serialized without one; serialize it "
                    "with vjp_order=k (k >= the order of derivatives you need) to differentiate it after loading")
            self._vjp = _vjp_of(self)
        return self._vjp

    # -- serialization ------------------------------------------------------------------------
    def serialize(self, vjp_order: int = 0) -> bytes:
        """The blob (format in ``funcgrad.export``), carrying ``vjp_order`` levels of VJP
        programs so that ``grad`` of the deserialized function works to that order."""
        if type(vjp_order) is not int or vjp_order < 0:
            raise TypeError(f"Exported.serialize: vjp_order must be an int >= 0, got {vjp_order!r}")
        chain, e = [self], self
        for _ in range(vjp_order):
            e = e.vjp()
            chain.append(e)
        data = wire.DataWriter()
        records = [_record(e, data) for e in chain]
        return wire.seal({"producer": _producer(), "exports": records}, data.getvalue())

    def __reduce__(self):
        # Pickles as its blob (no code, no pickled closures): what a worker process that
        # lacks the source needs. A loaded Exported keeps the VJP levels it has.
        from funcgrad.export.pickled_jit import load_blob  # (loads once per process)

        n, e = 0, self
        while e._vjp is not None and e._source is None:
            n, e = n + 1, e._vjp
        return (load_blob, (self.serialize(vjp_order=n),))


_SCALAR_KINDS = {bool: "b", int: "iu", float: "f"}


def _as_type(c, aval):
    a = get_aval_any(c)
    return c if a.dtype == aval.dtype else lax.convert_element_type(c, aval.dtype, False)


def _producer() -> str:
    from funcgrad import __version__

    return f"funcgrad {__version__}"


def _record(e: Exported, data) -> dict:
    problem = codec.exportable_problem(e.jaxpr)
    if problem:
        raise ExportError(f"funcgrad.export: cannot serialize {e.fun_name}: {problem}")
    enc = codec.Encoder(data)
    root = enc.program(e.jaxpr)
    return {"name": e.fun_name, "in_tree": trees.tree_to_json(e.in_tree), "out_tree": trees.tree_to_json(e.out_tree),
            "jaxprs": enc.table, "root": root}


def deserialize(blob) -> Exported:
    """An ``Exported`` from ``Exported.serialize()``'s bytes (no source needed).
    A foreign, truncated, tampered or other-version blob raises ``ExportError``."""
    header, data = wire.unseal(blob)
    try:
        records = header.get("exports")
        codec._check(isinstance(records, list) and records, "the header lists no exported function")
        chain = [_load_record(r, data) for r in records]
    except ExportError:
        raise
    except codec.DecodeError as e:
        raise ExportError(f"funcgrad.export.deserialize: malformed blob: {e}") from None
    except Exception as e:  # noqa: BLE001  (whatever a damaged header trips, one documented error)
        raise ExportError(f"funcgrad.export.deserialize: malformed blob: {type(e).__name__}: {e}") from None
    for prev, nxt in zip(chain, chain[1:]):
        want_in = [*prev.in_avals, *[tangent_aval(a) for a in prev.out_avals]]
        if len(nxt.in_avals) != len(want_in) or not all(a.same_type(b) for a, b in zip(nxt.in_avals, want_in)) \
                or [a.str_short() for a in nxt.out_avals] != [tangent_aval(a).str_short() for a in prev.in_avals]:
            raise ExportError(f"funcgrad.export.deserialize: malformed blob: the VJP of {prev.fun_name} has the "
                              "wrong signature")
        prev._vjp = nxt
    return chain[0]


def _load_record(r, data) -> Exported:
    codec._check(isinstance(r, dict) and isinstance(r.get("name"), str), "malformed export record")
    closed = codec.Decoder(data).program(r.get("jaxprs"), r.get("root"), r["name"])
    in_tree, out_tree = trees.tree_from_json(r.get("in_tree")), trees.tree_from_json(r.get("out_tree"))
    codec._check(in_tree.num_leaves == len(closed.in_avals) and out_tree.num_leaves == len(closed.out_avals),
                 "the argument/result structures do not match the program")
    return Exported(r["name"], in_tree, out_tree, closed)


# --- export -----------------------------------------------------------------------------------

def export(fun_jit, **kwargs):
    """``export(jit(f))(*args, **kwargs) -> Exported`` (``jax.export.export``).

    Arguments are arrays, scalars or ``ShapeDtypeStruct``-like objects (anything with
    ``.shape`` and ``.dtype``), in any pytree; static arguments (``static_argnums`` /
    ``static_argnames`` of the ``jit``) are given by value and baked in. JAX's
    ``platforms`` and ``disabled_checks`` keywords are accepted when they ask for
    nothing else than this CPU (``platforms=None``/``("cpu",)``, ``disabled_checks=()``).
    """
    if not isinstance(fun_jit, JittedFunction):
        raise TypeError(f"funcgrad.export.export: expected the result of funcgrad.jit, got {type(fun_jit).__name__} "
                        "(wrap the function: export(jit(f)))")
    platforms = kwargs.pop("platforms", None)
    if platforms is not None and tuple(platforms) != ("cpu",):
        raise ValueError(f"funcgrad.export.export: platforms={platforms!r}; funcgrad compiles for the CPU only")
    if tuple(kwargs.pop("disabled_checks", ())):
        raise ValueError("funcgrad.export.export: disabled_checks are not supported (there is nothing to disable)")
    if kwargs:
        raise TypeError(f"funcgrad.export.export: unexpected keyword arguments {sorted(kwargs)}")

    def do_export(*args, **kw) -> Exported:
        name = fun_jit.__name__
        dyn, static, nargs = fun_jit._split(args, kw)
        leaves, dyn_tree = pytree.tree_flatten(dyn)
        in_tree = pytree.tree_structure((tuple(dyn[0]), dyn[1]))
        paths = trees.args_paths(in_tree)
        in_avals = [_spec_aval(x, f"export({name}): argument {p}") for x, p in zip(leaves, paths)]

        def flat(*xs):
            a, k = fun_jit._rebuild(pytree.tree_unflatten(dyn_tree, xs), static, nargs)
            return fun_jit._fun(*a, **k)

        return _export_flat(flat, in_avals, name, in_tree)

    return do_export


def _spec_aval(x, what: str) -> ShapedArray:
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (np.ndarray, np.generic, Tracer)):
        return ShapedArray(x.shape, canonicalize(x.dtype, what=what), getattr(x, "weak_type", False))
    try:
        return get_aval_any(x)
    except TypeError as e:
        raise TypeError(f"{what}: {e}") from None


def _export_flat(fun, in_avals, name, in_tree) -> Exported:
    """Trace ``fun`` (pytree out) at ``in_avals``; inline its calls."""
    out_cell = []

    def flat(*xs):
        leaves, tree = pytree.tree_flatten(fun(*xs))
        for i, o in enumerate(leaves):
            if not isinstance(o, (Tracer, np.ndarray, np.generic, bool, int, float)):
                raise TypeError(f"export({name}): output leaf {i} is a {type(o).__name__}, not an array")
        out_cell.append(tree)
        return leaves

    jaxpr, consts = trace_to_jaxpr(flat, list(in_avals))
    if any(isinstance(c, Tracer) for c in consts):
        raise ExportError(f"export({name}): the function closes over a value traced by an enclosing transform; "
                          "export it outside transformations")
    source = ClosedJaxpr(jaxpr, consts)
    from funcgrad.lowering.inline import inline_calls  # lazy: import funcgrad stays free of llvmlite

    program = inline_calls(source)
    problem = codec.exportable_problem(program)
    if problem:
        raise ExportError(f"export({name}): {problem}")
    return Exported(name, in_tree, out_cell[0], program, source=source)


def _vjp_of(e: Exported) -> Exported:
    from funcgrad.transforms.ad_api import vjp

    n = len(e.in_avals)
    body = jaxpr_as_fun(e._source)

    def vjp_fun(*xs):
        _, pullback = vjp(lambda *a: list(body(*a)), *xs[:n])
        return list(pullback(list(xs[n:])))

    avals = [*e.in_avals, *[tangent_aval(a) for a in e.out_avals]]
    flat_tree = pytree.tree_structure((tuple(range(len(avals))), {}))
    return _export_flat(vjp_fun, avals, f"vjp({e.fun_name})", flat_tree)
