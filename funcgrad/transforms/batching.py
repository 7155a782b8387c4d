"""vmap: automatic vectorisation by a batching interpreter.

A ``BatchTracer`` holds a value with one extra (batch) axis and remembers where that
axis is (``bdim``; ``None`` for values that are the same for every example). Each
primitive's batch rule (registered under it in ``core/prims``) maps batched operands to
a batched result in one call, moving batch axes only when it must.
"""
from __future__ import annotations

import functools

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import bdim_at, moveaxis
from funcgrad.core.primitive import batch_rules, missing_rule
from funcgrad.core.trace import Trace, Tracer, full_raise, get_aval_any, new_main
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
    @property
    def axis_size(self) -> int:
        return self.main.payload

    def pure(self, val):
        return BatchTracer(self, val, None)

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        vals = [t.val for t in tracers]
        dims = [t.bdim for t in tracers]
        if all(d is None for d in dims):
            return primitive.bind(*vals, **params)
        rule = batch_rules.get(primitive)
        if rule is None:
            raise missing_rule("batch", primitive)
        out, out_dim = rule(vals, dims, **params)
        if primitive.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)


KEEP = "keep"  # an ``out_dims_wanted`` answer: batched at 0 if it depends on the batch, else not


def batch_flat(f_flat, args, in_dims, axis_size: int, out_dims_wanted, tape_dims: list | None = None):
    """Run ``f_flat`` over a batch; outputs get their batch axis at ``out_dims_wanted``
    (``None``: the output must not depend on the batch; ``KEEP``: axis 0 if it does,
    else unbatched). With a ``tape_dims`` list, tape outputs keep their own batching
    (shared tapes stay shared: no broadcast); their bdims, and those of ``KEEP``
    outputs, are appended to it in output order."""
    with new_main(BatchTrace, axis_size) as main:
        trace = BatchTrace(main)
        tracers = [BatchTracer(trace, a, d) if d is not None else a for a, d in zip(args, in_dims)]
        outs = f_flat(*tracers)
        results = []
        for i, o in enumerate(outs):
            t = full_raise(trace, o)
            want = out_dims_wanted(i, len(outs))
            results.append((t.val, t.bdim, want))
    final = []
    for val, bdim, want in results:
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
                raise ValueError("vmap: an output with out_axes=None depends on the mapped axis")
            final.append(val)
        else:
            ndim = len(get_aval_any(val).shape) + (1 if bdim is None else 0)
            final.append(
                bdim_at(val, bdim, axis_size, want % ndim) if bdim is None else moveaxis(val, bdim, want % ndim)
            )
    return final


def _broadcast_prefix(prefix, tree, what: str):
    """Expand an axes spec that is a pytree prefix of ``tree`` to one entry per leaf."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(pytree.tree_leaves(tree))
    p_leaves_tree = pytree.tree_structure(prefix, is_leaf=lambda x: x is None)
    out = []
    for p, sub in zip(
        pytree.tree_leaves(prefix, is_leaf=lambda x: x is None),
        _subtrees(tree, p_leaves_tree),
    ):
        if p is not None and not isinstance(p, int):
            raise TypeError(f"vmap {what}: entries must be int or None, got {type(p).__name__}")
        out.extend([p] * len(pytree.tree_leaves(sub)))
    return out


def _subtrees(tree, prefix_def):
    """The subtrees of ``tree`` at the leaves of the prefix structure ``prefix_def``."""
    if prefix_def.node_type is None:
        return [tree]
    children, _ = _children(tree)
    if prefix_def.node_type is not type(tree) or len(children) != len(prefix_def.children):
        raise ValueError(
            f"vmap in_axes/out_axes structure {prefix_def} is not a prefix of the arguments' structure "
            f"{pytree.tree_structure(tree)}"
        )
    out = []
    for c, cd in zip(children, prefix_def.children):
        out.extend(_subtrees(c, cd))
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


def leaf_owner(args, kwargs, i: int, labels=None) -> str:
    """Which argument holds leaf ``i`` of ``(args, kwargs)`` flattened, for error messages:
    "argument 1", "argument 1 (leaf 2)" or "argument 'name'" (``labels``: how to call
    each entry of ``args``, when not by its index)."""
    start = 0
    named = [(labels[k] if labels else str(k), a) for k, a in enumerate(args)]
    named += [(f"'{k}'", v) for k, v in sorted((kwargs or {}).items())]
    for label, arg in named:
        n = len(pytree.tree_leaves(arg))
        if i < start + n:
            return f"argument {label}" if n == 1 else f"argument {label} (leaf {i - start})"
        start += n
    return f"argument leaf {i}"


def vmap(fun, in_axes=0, out_axes=0, axis_size=None):
    """Vectorise ``fun`` over a new axis of its inputs.

    ``in_axes``: an int, ``None`` or a pytree prefix of the arguments (a tuple with one
    entry per argument); negative axes count from the end. ``out_axes`` likewise for the
    outputs. ``axis_size`` is required when no input is mapped.

    >>> vmap(lambda x, y: x @ y, in_axes=(0, None))(np.ones((5, 3)), np.ones(3)).shape
    (5,)
    """

    @functools.wraps(fun)
    def vmapped(*args):
        if isinstance(in_axes, list):
            spec = tuple(in_axes)
        else:
            spec = in_axes
        if isinstance(spec, tuple) and len(spec) != len(args):
            raise ValueError(
                f"vmap in_axes has {len(spec)} entries but the function got {len(args)} positional arguments"
            )
        leaves, in_tree = pytree.tree_flatten(args)
        dims = _broadcast_prefix(spec, args, "in_axes") if isinstance(spec, tuple) else [spec] * len(leaves)
        sizes = {}
        norm_dims = []
        for i, (x, d) in enumerate(zip(leaves, dims)):
            if d is None:
                norm_dims.append(None)
                continue
            shape = get_aval_any(x).shape
            if not -len(shape) <= d < len(shape):
                raise ValueError(
                    f"vmap: in_axes {d} is out of range for argument leaf {i} of shape {shape} (rank {len(shape)})"
                )
            d %= len(shape)
            norm_dims.append(d)
            sizes[i] = shape[d]
        if len(set(sizes.values())) > 1:
            owner = [a for a, arg in enumerate(args) for _ in pytree.tree_leaves(arg)]
            shown = "; ".join(
                f"argument {owner[i]}{'' if len(pytree.tree_leaves(args[owner[i]])) == 1 else f' (leaf {i})'} "
                f"has size {n} on axis {norm_dims[i]}"
                for i, n in sizes.items()
            )
            raise ValueError(f"vmap got inconsistent sizes for the mapped axes: {shown}")
        if sizes:
            size = next(iter(sizes.values()))
            if axis_size is not None and axis_size != size:
                raise ValueError(f"vmap: axis_size={axis_size} but the mapped inputs have size {size}")
        elif axis_size is None:
            raise ValueError("vmap: no argument is mapped (all in_axes are None); pass axis_size")
        else:
            size = int(axis_size)
        leaves = [
            np.asarray(x) if isinstance(x, (bool, int, float)) and d is not None else x
            for x, d in zip(leaves, norm_dims)
        ]
        out_tree = []

        def flat(*xs):
            out = fun(*pytree.tree_unflatten(in_tree, xs))
            o_leaves, o_tree = pytree.tree_flatten(out)
            out_tree[:] = [o_tree, out]
            return o_leaves

        out_spec = []

        def want(i, n):
            if not out_spec:
                o_tree, out = out_tree
                out_spec.extend(
                    _broadcast_prefix(out_axes, out, "out_axes")
                    if isinstance(out_axes, (tuple, list, dict))
                    else [out_axes] * n
                )
            return out_spec[i]

        outs = batch_flat(flat, leaves, norm_dims, size, want)
        return pytree.tree_unflatten(out_tree[0], outs)

    return vmapped
