"""Collectives over a named ``vmap`` axis: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``axis_index`` (re-exported by ``funcgrad.lax``), as JAX's.

``vmap(f, axis_name="i")`` binds the name ``"i"`` to its batch axis while ``f`` runs;
inside, ``lax.psum(x, "i")`` is the sum of ``x`` over all examples of that vmap (the
same value for every example), and so on. Nested vmaps with different names reduce
over the one named. Outside a vmap binding the name, a ``NameError`` says the axis
name is unbound, as JAX's.

How: each collective is a primitive (declared here, with all its rules: they need the
vmap's name and size, which only the batching transform knows). ``bind`` reaches the
vmap that binds the name however many transforms sit in between: ``grad``/``jvp``
apply the JVP rule (``psum`` and ``all_gather`` are linear; their transposes are
``psum`` and "sum, then take my slice"), ``jit`` and the ``lax`` loops stage the
primitive into their sub-programs, and when such a program is batched, the inner
batching inherits the vmap's name (``batching.batch_flat``). At a vmap with another
name the collective passes through (per example); at the named one its rule
(``BatchTrace.process_primitive`` → ``collective_rules``) reduces over the batch axis.
``pmax``/``pmin`` have no derivative, as in JAX.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core import pytree
from funcgrad.core.ad_util import Zero, deftranspose
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import bdim_at, moveaxis
from funcgrad.core.primitive import Primitive, allow_missing, jvp_rules
from funcgrad.core.trace import Tracer, get_aval_any
from funcgrad.transforms.batching import BatchTracer, axis_env, collective_rules

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size"]


def _main_for(axis_name, fname):
    for name, main in reversed(axis_env):
        if name == axis_name:
            return main
    bound = [n for n, _ in axis_env]
    where = f"; the bound axis names are {bound}" if bound else ""
    raise NameError(
        f"{fname}: unbound axis name: {axis_name!r}. Collectives work inside "
        f"vmap(f, axis_name={axis_name!r}){where}"
    )


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _unbound_impl(prim):
    def impl(*args, axis_name, **_):
        _main_for(axis_name, prim.name)  # raises: no vmap binds the name here
        raise NameError(f"{prim.name}: the vmap binding axis name {axis_name!r} is not the one running this code")
    return impl


def _collective_primitive(name, abstract_eval, batch):
    prim = Primitive(name)
    prim.def_impl(_unbound_impl(prim))
    prim.def_abstract_eval(abstract_eval)
    collective_rules[prim] = batch
    allow_missing("batch", prim, "batched by BatchTrace itself (collective_rules): needs the vmap's name and size")
    allow_missing("eager_vjp", prim, "a collective runs under vmap: the eager tape's general path handles it")
    allow_missing("lower", prim, "a staged collective is batched away by its named vmap before anything is compiled")
    return prim


def _bind_named(prim, v, axis_name, **params):
    """``prim.bind`` that reaches the vmap binding ``axis_name`` even for an operand from
    below it (a constant, a cotangent seeded outside the vmap)."""
    return prim.bind(_at_named_level(v, _main_for(axis_name, prim.name)), axis_name=axis_name, **params)


def _pass_through(trace, prim, val, bdim, params):
    """A collective over another vmap's axis: per example of this one (its batch axis
    is an ordinary axis to the named vmap below)."""
    return BatchTracer(trace, prim.bind(val, **params), bdim)


# --- psum, pmax, pmin -----------------------------------------------------------------------

def _reduction(name, reducer, unbatched):
    def abstract_eval(x, *, axis_name):
        return ShapedArray(x.shape, np.dtype(np.int64) if x.dtype == np.bool_ else x.dtype)

    def batch(trace, vals, dims, *, axis_name):
        (val,), (bdim,) = vals, dims
        if trace.axis_name != axis_name:
            return _pass_through(trace, prim, val, bdim, {"axis_name": axis_name})
        if get_aval_any(val).dtype == np.bool_:
            val = lax.convert_element_type(val, np.int64)
        return unbatched(val, trace.axis_size) if bdim is None else reducer(val, (bdim,))

    prim = _collective_primitive(name, abstract_eval, batch)
    return prim


def _times(val, size):
    aval = get_aval_any(val)
    return lax.mul(val, lax.broadcast_in_dim(np.asarray(size, aval.dtype), aval.shape, ()))


psum_p = _reduction("psum", lax.reduce_sum, _times)
pmax_p = _reduction("pmax", lax.reduce_max, lambda v, n: v)
pmin_p = _reduction("pmin", lax.reduce_min, lambda v, n: v)
for _p in (pmax_p, pmin_p):
    allow_missing("jvp", _p, "not differentiable, as in JAX (no derivative rule for pmax/pmin)")
    allow_missing("transpose", _p, "not linear (and not differentiable)")


def _psum_jvp(primals, tangents, *, axis_name):
    (x,), (t,) = primals, tangents
    out = _bind_named(psum_p, x, axis_name)
    if type(t) is Zero or get_aval_any(x).dtype.kind != "f":
        return out, Zero.like(out)
    return out, _bind_named(psum_p, t, axis_name)


def _psum_transpose(ct, x, *, axis_name):
    # d/dx_j of sum_k x_k (the same at every example i): the cotangents of all examples add up.
    return [None if type(ct) is Zero else _bind_named(psum_p, ct, axis_name)]


jvp_rules[psum_p] = _psum_jvp
deftranspose(psum_p, _psum_transpose)


# --- all_gather ------------------------------------------------------------------------------

def _gathered_shape(shape, axis, tiled, size):
    shape = list(shape)
    if tiled:
        shape[axis] *= size
    else:
        shape.insert(axis, size)
    return tuple(shape)


def _all_gather_abstract_eval(x, *, axis_name, axis_size, axis, tiled):
    return ShapedArray(_gathered_shape(x.shape, axis, tiled, axis_size), x.dtype)


def _all_gather_batch(trace, vals, dims, *, axis_name, axis_size, axis, tiled):
    (val,), (bdim,) = vals, dims
    if trace.axis_name != axis_name:
        if bdim is None:
            return BatchTracer(trace, all_gather_p.bind(val, axis_name=axis_name, axis_size=axis_size, axis=axis,
                                                         tiled=tiled), None)
        # This vmap's axis goes first in the data the named vmap sees; the gathered
        # axis moves one to the right, and the result keeps this axis first.
        out = all_gather_p.bind(moveaxis(val, bdim, 0), axis_name=axis_name, axis_size=axis_size, axis=axis + 1,
                                tiled=tiled)
        return BatchTracer(trace, out, 0)
    out = bdim_at(val, bdim, trace.axis_size, axis)  # every example's value along ``axis``
    if tiled:
        shape = list(get_aval_any(out).shape)
        shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
        out = lax.reshape(out, tuple(shape))
    return out


all_gather_p = _collective_primitive("all_gather", _all_gather_abstract_eval, _all_gather_batch)


def _all_gather_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = _bind_named(all_gather_p, x, **params)
    if type(t) is Zero or get_aval_any(x).dtype.kind != "f":
        return out, Zero.like(out)
    return out, _bind_named(all_gather_p, t, **params)


def _all_gather_transpose(ct, x, *, axis_name, axis_size, axis, tiled):
    # out_i = [x_0, ..., x_{n-1}] at every example i: x_j's cotangent is slice j of the
    # sum over examples of their cotangents.
    if type(ct) is Zero:
        return [None]
    total = _bind_named(psum_p, ct, axis_name)
    me = axis_index(axis_name)
    shape = get_aval_any(total).shape
    chunk = shape[axis] // axis_size if tiled else 1
    zero = np.zeros((), np.int64)
    starts = [zero] * len(shape)
    starts[axis] = lax.mul(lax.convert_element_type(me, np.int64), np.asarray(chunk, np.int64))
    sizes = list(shape)
    sizes[axis] = chunk
    piece = lax.dynamic_slice(total, starts, sizes)
    return [piece if tiled else lax.reshape(piece, shape[:axis] + shape[axis + 1:])]


jvp_rules[all_gather_p] = _all_gather_jvp
deftranspose(all_gather_p, _all_gather_transpose)


# --- the public functions --------------------------------------------------------------------

def _check_array(x, fname):
    try:
        get_aval_any(x)
    except TypeError as e:
        raise TypeError(f"{fname}: {e}") from None


def _at_named_level(v, main):
    """``v`` as seen by the vmap ``main`` (or a transform above it): a value from below
    it is the same for every example."""
    if isinstance(v, Tracer) and v._trace.main.level >= main.level:
        return v
    return BatchTracer(main.trace(), v, None)


def _bind_each(fname, prim, x, axis_name, **params):
    def leaf(v):
        _check_array(v, fname)
        for name in _names(axis_name):
            size = _main_for(name, fname).trace().axis_size
            v = _bind_named(prim, v, name, **{k: f(size) for k, f in params.items()})
        return v

    return pytree.tree_map(leaf, x)


def _check_groups(fname, axis_index_groups):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{fname}: axis_index_groups is not supported")


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum of ``x`` (a pytree) over the vmap axis named ``axis_name`` (a name or a tuple of names)."""
    _check_groups("psum", axis_index_groups)
    return _bind_each("psum", psum_p, x, axis_name)


def pmax(x, axis_name, *, axis_index_groups=None):
    """Maximum of ``x`` over the named vmap axis."""
    _check_groups("pmax", axis_index_groups)
    return _bind_each("pmax", pmax_p, x, axis_name)


def pmin(x, axis_name, *, axis_index_groups=None):
    """Minimum of ``x`` over the named vmap axis."""
    _check_groups("pmin", axis_index_groups)
    return _bind_each("pmin", pmin_p, x, axis_name)


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of ``x`` over the named vmap axis (a float, like ``psum(x) / axis_size``)."""
    from funcgrad import numpy as fnp

    _check_groups("pmean", axis_index_groups)
    size = 1
    for name in _names(axis_name):
        size *= _main_for(name, "pmean").trace().axis_size
    return pytree.tree_map(lambda s: fnp.true_divide(s, size), _bind_each("pmean", psum_p, x, axis_name))


def all_gather(x, axis_name, *, axis=0, tiled=False, axis_index_groups=None):
    """Every example's ``x`` stacked along a new axis ``axis`` (with ``tiled=True``,
    concatenated along the existing axis ``axis`` instead), as JAX's."""
    _check_groups("all_gather", axis_index_groups)

    def leaf(v):
        _check_array(v, "all_gather")
        rank = len(get_aval_any(v).shape)
        if not -(rank + 1) <= axis <= rank or (tiled and not -rank <= axis < rank):
            raise ValueError(f"all_gather: axis {axis} is out of range for an operand of rank {rank}")
        a = axis % (rank if tiled else rank + 1)
        return _bind_each("all_gather", all_gather_p, v, axis_name, axis_size=lambda n: n,
                          axis=lambda n: a, tiled=lambda n: bool(tiled))

    return pytree.tree_map(leaf, x)


def axis_index(axis_name):
    """This example's index (int32) along the vmap axis named ``axis_name``."""
    main = _main_for(axis_name, "axis_index")
    trace = main.trace()
    return BatchTracer(trace, np.arange(trace.axis_size, dtype=np.int32), 0)


def axis_size(axis_name) -> int:
    """The size of the vmap axis named ``axis_name`` (the product for a tuple of names)."""
    size = 1
    for name in _names(axis_name):
        size *= _main_for(name, "axis_size").trace().axis_size
    return size
