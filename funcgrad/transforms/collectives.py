"""Collectives over a named ``vmap`` axis: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``axis_index`` (re-exported by ``funcgrad.lax``), as JAX's.

``vmap(f, axis_name="i")`` binds the name ``"i"`` to its batch axis while ``f`` runs;
inside, ``lax.psum(x, "i")`` is the sum of ``x`` over all examples of that vmap (the
same value for every example), and so on. Nested vmaps with different names reduce
over the one named. Outside a vmap binding the name, a ``NameError`` says the axis
name is unbound, as JAX's.

How: a collective is computed at the named vmap's level, on its batched value (a
reduction over the batch axis, or a move of it), so the result is unbatched there;
a value batched by a vmap nested *inside* the named one keeps that inner batch axis.
Values traced by another transform inside the named vmap (``grad``/``jvp``/``jit``
applied inside it, or a ``lax`` loop body) are not supported: apply the collective
outside that transform.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core import pytree
from funcgrad.core.batch_util import moveaxis
from funcgrad.core.trace import Tracer, full_raise, get_aval_any
from funcgrad.transforms.batching import BatchTracer, axis_env

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index"]


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


def _apply(x, main, fname, rule, lead=0):
    """``rule(val, bdim, size, lead)`` at the named level, through any vmaps nested
    inside it; ``lead`` counts inner batch axes moved to the front of the data."""
    if isinstance(x, Tracer) and x._trace.main.level > main.level:
        if isinstance(x, BatchTracer):
            if x.bdim is None:
                return _apply(x.val, main, fname, rule, lead)
            # This inner vmap's batch axis goes first in the data seen below; the result
            # gets it back at 0.
            return BatchTracer(x._trace, _apply(moveaxis(x.val, x.bdim, 0), main, fname, rule, lead + 1), 0)
        raise TypeError(
            f"{fname}: its operand was traced by {type(x._trace).__name__} inside the vmap binding the axis "
            "name (grad, jvp, jit or a lax loop body applied inside it); collectives over a named axis are "
            "supported on values of that vmap and of vmaps nested in it: apply the collective outside "
            "that transform"
        )
    trace = main.trace()
    t = full_raise(trace, x)
    return rule(t.val, t.bdim, trace.axis_size, lead)


def _check_array(x, fname):
    try:
        get_aval_any(x)
    except TypeError as e:
        raise TypeError(f"{fname}: {e}") from None


def _collective(fname, rule):
    def run(x, axis_name, *, axis_index_groups=None):
        if axis_index_groups is not None:
            raise NotImplementedError(f"{fname}: axis_index_groups is not supported")

        def leaf(v):
            _check_array(v, fname)
            for name in _names(axis_name):
                v = _apply(v, _main_for(name, fname), fname, rule)
            return v

        return pytree.tree_map(leaf, x)

    run.__name__ = fname
    return run


def _reduce(reducer, unbatched):
    def rule(val, bdim, size, lead):
        if bdim is None:
            return unbatched(val, size)
        return reducer(val, (bdim,))
    return rule


def _times(val, size):
    v = np.asarray(val) if isinstance(val, (bool, int, float)) else val
    aval = get_aval_any(v)
    return lax.mul(v, lax.convert_element_type(np.asarray(size), aval.dtype)) if aval.dtype != np.bool_ else v


def _mean(val, bdim, size, lead):
    from funcgrad import numpy as fnp

    return fnp.true_divide(_reduce(lax.reduce_sum, _times)(val, bdim, size, lead), size)


psum = _collective("psum", _reduce(lax.reduce_sum, _times))
psum.__doc__ = "Sum of ``x`` (a pytree) over the vmap axis named ``axis_name`` (a name or a tuple of names)."
pmean = _collective("pmean", _mean)
pmean.__doc__ = "Mean of ``x`` over the named vmap axis (a float, like ``psum(x) / axis_size``)."
pmax = _collective("pmax", _reduce(lax.reduce_max, lambda v, n: v))
pmax.__doc__ = "Maximum of ``x`` over the named vmap axis."
pmin = _collective("pmin", _reduce(lax.reduce_min, lambda v, n: v))
pmin.__doc__ = "Minimum of ``x`` over the named vmap axis."


def all_gather(x, axis_name, *, axis=0, tiled=False, axis_index_groups=None):
    """Every example's ``x`` stacked along a new axis ``axis`` (with ``tiled=True``,
    concatenated along the existing axis ``axis`` instead), as JAX's."""
    def rule(val, bdim, size, lead):
        from funcgrad.core.batch_util import bdim_at

        ndim = len(get_aval_any(val).shape) - (0 if bdim is None else 1)  # data rank incl. inner batch axes
        rank = ndim - lead
        if not -(rank + 1) <= axis <= rank or (tiled and not -rank <= axis < rank):
            raise ValueError(f"all_gather: axis {axis} is out of range for an operand of rank {rank}")
        a = lead + (axis % (rank + (0 if tiled else 1)))
        out = bdim_at(val, bdim, size, a)
        if tiled:
            shape = list(get_aval_any(out).shape)
            shape[a : a + 2] = [shape[a] * shape[a + 1]]
            out = lax.reshape(out, tuple(shape))
        return out

    return _collective("all_gather", rule)(x, axis_name, axis_index_groups=axis_index_groups)


def axis_index(axis_name):
    """This example's index (int32) along the vmap axis named ``axis_name``."""
    main = _main_for(axis_name, "axis_index")
    trace = main.trace()
    return BatchTracer(trace, np.arange(trace.axis_size, dtype=np.int32), 0)
