"""vmap: automatic vectorisation by a batching interpreter.

A ``BatchTracer`` holds a value with one extra (batch) axis and remembers where that
axis is (``bdim``; ``None`` for values that are the same for every example). Each
primitive's batch rule (registered under it in ``core/prims``) maps batched operands to
a batched result in one call, moving batch axes only when it must.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.array import leaf_values
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import bdim_at, moveaxis
from funcgrad.core.primitive import batch_rules, missing_rule
from funcgrad.core.trace import Trace, Tracer, full_raise, get_aval_any, new_main
from funcgrad.core.wrapping import fun_name, wraps
from funcgrad.errors import UnsupportedDtypeError
from funcgrad.tapes import TapeAval


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim", "_aval")

    def __init__(self, trace, val, bdim):
        self._trace = trace
        self.val = val
        self.bdim = bdim
        self._aval = None

    @property
    def aval(self):
        if self._aval is None:
            a = get_aval_any(self.val)
            if isinstance(a, TapeAval):  # a batched tape: its per-example view
                a = a.unbatched()
            elif self.bdim is not None:
                a = ShapedArray(a.shape[: self.bdim] + a.shape[self.bdim + 1 :], a.dtype, a.weak_type)
            self._aval = a
        return self._aval

    def full_lower(self):
        if self.bdim is None:  # the same for every example: not batched at all
            v = self.val
            return v.full_lower() if isinstance(v, Tracer) else v
        return self


class BatchTrace(Trace):
    # main.payload is (axis size, axis name or None).
    @property
    def axis_size(self) -> int:
        return self.main.payload[0]

    @property
    def axis_name(self):
        return self.main.payload[1]

    def pure(self, val):
        return BatchTracer(self, val, None)

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        vals = [t.val for t in tracers]
        dims = [t.bdim for t in tracers]
        if primitive in collective_rules:  # needs this vmap's name and size
            return collective_rules[primitive](self, vals, dims, **params)
        if all(d is None for d in dims):
            return primitive.bind(*vals, **params)
        rule = batch_rules.get(primitive)
        if rule is None:
            raise missing_rule("batch", primitive)
        if primitive.jaxpr_params and self.main.payload[1] is not None:
            # A rule batching sub-programs runs them under a vmap of its own: that vmap
            # carries this one's name, so collectives staged inside them find it.
            _inherited.append(self.main.payload[1])
            try:
                out, out_dim = rule(vals, dims, **params)
            finally:
                _inherited.pop()
        else:
            out, out_dim = rule(vals, dims, **params)
        if primitive.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)


# The vmap axis names in scope, innermost last: (name, MainTrace) pairs, pushed by
# ``batch_flat(axis_name=...)`` (collectives: ``transforms/collectives.py``).
axis_env: list = []
# Collective primitive -> ``rule(trace, vals, bdims, **params)`` (``transforms/collectives.py``).
collective_rules: dict = {}
# The names of the named vmaps whose batch rules are running sub-programs, innermost last.
_inherited: list = []
INHERIT = object()  # batch_flat's default axis_name: the running batch rule's vmap's name

KEEP = "keep"  # an ``out_dims_wanted`` answer: batched at 0 if it depends on the batch, else not


def batch_flat(f_flat, args, in_dims, axis_size: int, out_dims_wanted, tape_dims: list | None = None,
               axis_name=INHERIT, fname: str = "vmap"):
    """Run ``f_flat`` over a batch; outputs get their batch axis at ``out_dims_wanted``
    (``None``: the output must not depend on the batch; ``KEEP``: axis 0 if it does,
    else unbatched). With a ``tape_dims`` list, tape outputs keep their own batching
    (shared tapes stay shared: no broadcast); their bdims, and those of ``KEEP``
    outputs, are appended to it in output order. ``axis_name`` names the batch axis for
    collectives while ``f_flat`` runs (by default, a batch rule's sub-program is batched
    under the name of the vmap running the rule); ``fname`` heads errors."""
    if axis_name is INHERIT:
        axis_name = _inherited[-1] if _inherited else None
    with new_main(BatchTrace, (axis_size, axis_name)) as main:
        trace = main.trace()
        if axis_name is not None:
            axis_env.append((axis_name, main))
        try:
            tracers = [BatchTracer(trace, a, d) if d is not None else a for a, d in zip(args, in_dims)]
            outs = f_flat(*tracers)
        finally:
            if axis_name is not None:
                axis_env.pop()
        results = []
        for i, o in enumerate(outs):
            t = full_raise(trace, o)
            want = out_dims_wanted(i, len(outs))
            results.append((t.val, t.bdim, want))
    final = []
    for i, (val, bdim, want) in enumerate(results):
        if isinstance(get_aval_any(val), TapeAval):
            # A tape's batch "axis" is a flag: batched tapes (bdim 0) carry per-lane fields
            # and masks; a shared tape is broadcast into one when a mapped output is wanted.
            if tape_dims is not None:
                tape_dims.append(bdim)
            elif want is not None and bdim is None:
                from funcgrad.transforms.control_flow.tape_scan import tape_broadcast

                val = tape_broadcast(val, axis_size)
            elif want is None and bdim is not None:
                raise ValueError("vmap: an output with out_axes=None depends on the mapped axis")
            final.append(val)
            continue
        if want is KEEP:
            final.append(val if bdim is None else moveaxis(val, bdim, 0))
            if tape_dims is not None:
                tape_dims.append(None if bdim is None else 0)
        elif want is None:
            if bdim is not None:
                raise ValueError(f"{fname}: output {i} has out_axes=None but depends on the mapped axis")
            final.append(val)
        else:
            ndim = len(get_aval_any(val).shape) + (1 if bdim is None else 0)
            if not -ndim <= want < ndim:
                raise ValueError(
                    f"{fname}: out_axes={want} is out of range for output {i}, which is batched to rank {ndim} "
                    f"(valid: {-ndim} to {ndim - 1})"
                )
            final.append(
                bdim_at(val, bdim, axis_size, want % ndim) if bdim is None else moveaxis(val, bdim, want % ndim)
            )
    return final


def _broadcast_prefix(prefix, tree, what: str, fname: str = "vmap"):
    """Expand an axes spec that is a pytree prefix of ``tree`` to one entry per leaf."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(pytree.tree_leaves(tree))
    p_leaves_tree = pytree.tree_structure(prefix, is_leaf=lambda x: x is None)
    out = []
    for p, sub in zip(
        pytree.tree_leaves(prefix, is_leaf=lambda x: x is None),
        _subtrees(tree, p_leaves_tree, what, fname),
    ):
        if p is not None and (not isinstance(p, (int, np.integer)) or isinstance(p, bool)):
            raise TypeError(f"{fname} {what}: entries must be int or None, got {type(p).__name__}")
        out.extend([p] * len(pytree.tree_leaves(sub)))
    return out


def _subtrees(tree, prefix_def, what: str = "in_axes", fname: str = "vmap"):
    """The subtrees of ``tree`` at the leaves of the prefix structure ``prefix_def``."""
    if prefix_def.node_type is None:
        return [tree]
    children, tree_def = _children(tree)
    if (prefix_def.node_type is not type(tree) or len(children) != len(prefix_def.children)
            or tree_def is None or prefix_def.aux != tree_def.aux):
        whose = "arguments'" if what == "in_axes" else "outputs'"
        keys = ""
        if isinstance(tree, dict) and prefix_def.node_type is dict:
            keys = f" (keys {sorted(map(str, prefix_def.aux))} vs {sorted(map(str, tree_def.aux))})"
        raise ValueError(
            f"{fname} {what} structure {prefix_def} is not a prefix of the {whose} structure "
            f"{pytree.tree_structure(tree)}{keys}"
        )
    out = []
    for c, cd in zip(children, prefix_def.children):
        out.extend(_subtrees(c, cd, what, fname))
    return out


def _children(tree):
    leaves_def = pytree.tree_structure(tree)
    if leaves_def.node_type is None:
        return [], None
    # One level of flattening: unflatten each child structure from its own leaves.
    leaves = pytree.tree_leaves(tree)
    kids, i = [], 0
    for cd in leaves_def.children:
        kids.append(pytree.tree_unflatten(cd, leaves[i : i + cd.num_leaves]))
        i += cd.num_leaves
    return kids, leaves_def


NON_ARRAY_FIX = ("Arguments are arrays, scalars or pytrees of them: close over any other value "
                 "(or bind it with functools.partial)")


def argument_error(where: str, e: TypeError) -> TypeError:
    """The error for an argument of a transform that is not an array: a dtype funcgrad does
    not support keeps its type (``UnsupportedDtypeError``); any other value gets the fix."""
    if isinstance(e, UnsupportedDtypeError):
        return UnsupportedDtypeError(f"{where}: {e}")
    return TypeError(f"{where}: {e}. {NON_ARRAY_FIX}")


def leaf_owner(args, kwargs, i: int, labels=None) -> str:
    """Which argument holds leaf ``i`` of ``(args, kwargs)`` flattened, for error messages:
    "argument 1", "argument 1, leaf ['w'][0]" or "argument 'name'" (``labels``: how to
    call each entry of ``args``, when not by its index)."""
    start = 0
    named = [(labels[k] if labels else str(k), a) for k, a in enumerate(args)]
    named += [(f"'{k}'", v) for k, v in sorted((kwargs or {}).items())]
    for label, arg in named:
        n = len(pytree.tree_leaves(arg))
        if i < start + n:
            return argument_leaf(label, arg, i - start)
        start += n
    return f"argument leaf {i}"


def argument_leaf(label: str, arg, k: int) -> str:
    """Leaf ``k`` of the argument ``arg`` for error messages, by its key path:
    "argument 0" (``arg`` is a leaf) or "argument 0, leaf ['name']"."""
    paths = pytree.tree_leaves_with_path(arg)
    if len(paths) == 1 and not paths[0][0]:
        return f"argument {label}"
    return f"argument {label}, leaf {pytree.keystr(paths[k][0])}"


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, axis_name=None, spmd_axis_name=None):
    """Vectorise ``fun`` over a new axis of its inputs.

    ``in_axes``: an int, ``None`` or a pytree prefix of the positional arguments (a
    tuple with one entry per argument); negative axes count from the end. Keyword
    arguments are always mapped over their axis 0 (as JAX's). ``out_axes`` likewise for
    the outputs. ``axis_size`` is required when no input is mapped. ``axis_name`` names
    the mapped axis for the collectives in ``funcgrad.lax`` (``psum``, ``pmean``,
    ``pmax``, ``pmin``, ``all_gather``, ``axis_index``); ``spmd_axis_name`` (a sharding
    hint in JAX) is accepted and ignored.

    >>> vmap(lambda x, y: x @ y, in_axes=(0, None))(np.ones((5, 3)), np.ones(3)).shape
    (5,)
    """
    fname = f"vmap({fun_name(fun)})"
    if not callable(fun):
        raise TypeError(f"vmap: expected a function, got {type(fun).__name__}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or isinstance(in_axes, (int, tuple)) and not isinstance(in_axes, bool)):
        raise TypeError(
            f"{fname}: in_axes must be an int, None, or a tuple with one entry per positional argument; "
            f"got {type(in_axes).__name__}"
        )
    if axis_name is not None:
        try:
            hash(axis_name)
        except TypeError:
            raise TypeError(f"{fname}: axis_name must be hashable, got {type(axis_name).__name__}") from None

    @wraps(fun)
    def vmapped(*args, **kwargs):
        spec = in_axes
        if isinstance(spec, tuple) and len(spec) != len(args):
            raise ValueError(
                f"{fname}: in_axes has {len(spec)} entries but the function got {len(args)} positional arguments"
            )
        a_leaves, a_tree = pytree.tree_flatten(args)
        k_leaves, k_tree = pytree.tree_flatten(kwargs)
        leaves = a_leaves + k_leaves
        dims = _broadcast_prefix(spec, args, "in_axes", fname) if isinstance(spec, tuple) else [spec] * len(a_leaves)
        dims = list(dims) + [0] * len(k_leaves)
        sizes = {}
        norm_dims = []
        for i, (x, d) in enumerate(zip(leaves, dims)):
            if type(x) is int and not _I64_MIN <= x <= _I64_MAX:
                raise OverflowError(
                    f"{fname}: {leaf_owner(args, kwargs, i)} is the Python int {x}, which does not fit in int64")
            if d is None:
                norm_dims.append(None)
                continue
            try:
                shape = get_aval_any(x).shape
            except TypeError as e:
                raise argument_error(f"{fname}: {leaf_owner(args, kwargs, i)}", e) from None
            if not -len(shape) <= d < len(shape):
                raise ValueError(
                    f"{fname}: in_axes {d} is out of range for {leaf_owner(args, kwargs, i)} of shape {shape} "
                    f"(rank {len(shape)})"
                )
            d %= len(shape)
            norm_dims.append(d)
            sizes[i] = shape[d]
        if len(set(sizes.values())) > 1:
            shown = "; ".join(
                f"{leaf_owner(args, kwargs, i)} has size {n} on axis {norm_dims[i]}" for i, n in sizes.items()
            )
            raise ValueError(f"{fname} got inconsistent sizes for the mapped axes: {shown}")
        if sizes:
            size = next(iter(sizes.values()))
            if axis_size is not None and axis_size != size:
                raise ValueError(f"{fname}: axis_size={axis_size} but the mapped inputs have size {size}")
        elif axis_size is None:
            raise ValueError(f"{fname}: no argument is mapped (all in_axes are None); pass axis_size")
        else:
            size = int(axis_size)
        leaves = [
            np.asarray(x) if isinstance(x, (bool, int, float, complex)) and d is not None else x
            for x, d in zip(leaves, norm_dims)
        ]
        out_tree = []
        n_a = len(a_leaves)

        def flat(*xs):
            out = fun(*pytree.tree_unflatten(a_tree, xs[:n_a]), **pytree.tree_unflatten(k_tree, xs[n_a:]))
            o_leaves, o_tree = pytree.tree_flatten(out)
            out_tree[:] = [o_tree, out]
            return o_leaves

        out_spec = []

        def want(i, n):
            if not out_spec:
                o_tree, out = out_tree
                out_spec.extend(
                    _broadcast_prefix(out_axes, out, "out_axes", fname)
                    if isinstance(out_axes, (tuple, list, dict))
                    else [out_axes] * n
                )
            return out_spec[i]

        outs = batch_flat(flat, leaves, norm_dims, size, want, axis_name=axis_name, fname=fname)
        return pytree.tree_unflatten(out_tree[0], leaf_values(outs))

    return vmapped
