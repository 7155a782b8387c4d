"""funcgrad.numpy: functions of functions (``vectorize``, ``apply_along_axis``,
``apply_over_axes``, ``piecewise``), selection (``select``, ``choose``, ``compress``,
``extract``) and the functional forms of NumPy's in-place writers (``place``, ``put``,
``put_along_axis``, ``fill_diagonal``).

Written as JAX writes them: the function-taking ones through ``vmap`` (so a Python
function of one element or one core block is batched, not looped), the writers as
gathers/scatters that return a NEW array. NumPy's writers modify their argument; funcgrad
arrays are immutable, so (as in JAX) they take ``inplace=False``, and the default
``inplace=True`` raises a ``ValueError`` saying so. Data-dependent sizes (``compress``,
``extract``) need concrete conditions, or JAX's ``size=``/``fill_value=``.
"""
from __future__ import annotations

import functools
import re

import numpy as np

from funcgrad import errors
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api._util import (
    aval_of,
    broadcast_shapes,
    broadcast_to,
    canonicalize_axis,
    full,
    is_tracer,
    promote_dtypes,
    shape_of,
)
from funcgrad.numpy_api.indexing import at, take, take_along_axis
from funcgrad.numpy_api.shape import array_arg, cast, check_out, expand_dims, ravel, static_int
from funcgrad.numpy_api.splitting import concrete_value, take_static
from funcgrad.transforms.batching import vmap

__all__ = [
    "vectorize", "apply_along_axis", "apply_over_axes", "piecewise", "select", "choose", "compress", "extract",
    "place", "put", "put_along_axis", "fill_diagonal",
]

_i64 = np.dtype(np.int64)


# --- vectorize -------------------------------------------------------------------------
_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_SIGNATURE = rf"^{_CORE}(?:,{_CORE})*->{_CORE}(?:,{_CORE})*$"


def _parse_signature(signature):
    sig = re.sub(r"\s+", "", signature) if isinstance(signature, str) else None
    if sig is None or not re.match(_SIGNATURE, sig):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r} (e.g. '(n),(n)->()')")
    return [[tuple(re.findall(_DIM, arg)) for arg in re.findall(_CORE, side)] for side in sig.split("->")]


def _core_sizes(values, core_dims):
    """The batch shape of each input and the size of each named core dimension."""
    sizes, batch_shapes = {}, []
    for k, (v, dims) in enumerate(zip(values, core_dims)):
        shp = shape_of(v)
        if len(shp) < len(dims):
            raise ValueError(
                f"vectorize: input {k} has shape {shp}, with fewer dimensions than its core dimensions {dims}"
            )
        for name, size in zip(dims, shp[len(shp) - len(dims):]):
            if sizes.setdefault(name, size) != size:
                raise ValueError(
                    f"vectorize: inconsistent size for core dimension {name!r}: {size} (input {k} of shape "
                    f"{shp}) vs {sizes[name]}"
                )
        batch_shapes.append(shp[:len(shp) - len(dims)])
    return batch_shapes, sizes


def _check_outputs(out, out_dims, sizes):
    multi = len(out_dims) > 1
    outs = out if multi else (out,)
    if multi and (not isinstance(out, tuple) or len(out) != len(out_dims)):
        raise TypeError(f"vectorize: the function must return a tuple of {len(out_dims)} outputs for the signature")
    for k, (o, dims) in enumerate(zip(outs, out_dims)):
        shp = shape_of(o)
        if len(shp) != len(dims):
            raise ValueError(
                f"vectorize: output {k} has shape {shp}, but the signature gives it core dimensions {dims}"
            )
        for name, size in zip(dims, shp):
            if sizes.setdefault(name, size) != size:
                raise ValueError(
                    f"vectorize: output {k} has size {size} for core dimension {name!r}, expected {sizes[name]}"
                )
    return out


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``pyfunc`` (written for scalars, or for the core blocks of ``signature``, e.g.
    ``'(n),(n)->()'``) applied over the broadcast leading dimensions of its array
    arguments, with one ``vmap`` per batch dimension (JAX's ``jax.numpy.vectorize``).
    ``excluded``: positions or keyword names passed through unchanged.

    >>> fnp.vectorize(lambda a, b: fnp.dot(a, b), signature="(n),(n)->()")(fnp.ones((4, 3)), fnp.ones(3)).shape
    (4,)
    """
    if not callable(pyfunc):
        raise TypeError(f"vectorize: pyfunc must be callable, got {type(pyfunc).__name__}")
    excluded = frozenset(excluded)
    for e in excluded:
        if not isinstance(e, (int, str)) or (isinstance(e, int) and e < 0):
            raise TypeError(f"vectorize: excluded must hold non-negative ints and str names, got {e!r}")
    parsed = None if signature is None else _parse_signature(signature)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        dyn_pos = [i for i, a in enumerate(args) if i not in excluded and a is not None]
        dyn_kw = [k for k in kwargs if k not in excluded]
        if parsed is not None:
            if dyn_kw:
                raise TypeError(f"vectorize: with a signature, pass {dyn_kw} positionally or list them in excluded")
            if len(parsed[0]) != len(dyn_pos):
                raise TypeError(
                    f"vectorize: wrong number of positional arguments: the signature {signature!r} takes "
                    f"{len(parsed[0])}, got {len(dyn_pos)}"
                )
        core_dims = parsed[0] if parsed is not None else [()] * (len(dyn_pos) + len(dyn_kw))
        values = [array_arg(a, "vectorize") for a in [args[i] for i in dyn_pos] + [kwargs[k] for k in dyn_kw]]
        batch_shapes, sizes = _core_sizes(values, core_dims)
        batch = broadcast_shapes("vectorize", *batch_shapes)
        prepared, mapped = [], []
        for v, b, dims in zip(values, batch_shapes, core_dims):
            b = (1,) * (len(batch) - len(b)) + tuple(b)
            keep = [d for d in range(len(batch)) if b[d] == batch[d]]
            core = shape_of(v)[len(shape_of(v)) - len(dims):]
            prepared.append(lax.reshape(v, tuple(b[d] for d in keep) + core))  # broadcast dims dropped
            mapped.append(set(keep))

        def core_fn(*xs):
            full_args, kw = list(args), dict(kwargs)
            for i, x in zip(dyn_pos, xs):
                full_args[i] = x
            for k, x in zip(dyn_kw, xs[len(dyn_pos):]):
                kw[k] = x
            out = pyfunc(*full_args, **kw)
            return out if parsed is None else _check_outputs(out, parsed[1], dict(sizes))

        f = core_fn
        for d in reversed(range(len(batch))):
            f = vmap(f, in_axes=tuple(0 if d in m else None for m in mapped), axis_size=batch[d])
        return f(*prepared)

    return wrapped


# --- apply_along_axis / apply_over_axes / piecewise ----------------------------------------
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to each 1-d slice of ``arr`` along ``axis``, batched with ``vmap``
    (JAX's way); its output dimensions replace ``axis``.

    >>> fnp.apply_along_axis(fnp.sum, 1, fnp.ones((2, 3)))
    Array([3., 3.])
    """
    x = array_arg(arr, "apply_along_axis")
    nd = aval_of(x).ndim
    axis = canonicalize_axis(axis, nd, "apply_along_axis")

    def func(v):
        return func1d(v, *args, **kwargs)

    for i in range(1, nd - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(x)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn; a result that lost the axis gets
    it back (length 1), so the rank is kept.

    >>> fnp.apply_over_axes(fnp.sum, fnp.ones((2, 3, 4)), [0, 2]).shape
    (1, 3, 1)
    """
    x = array_arg(a, "apply_over_axes")
    nd = aval_of(x).ndim
    axes = [axes] if np.ndim(axes) == 0 else list(axes)
    for ax in axes:
        ax = static_int(ax, "apply_over_axes", "axes")
        if ax < 0:
            ax += nd
        y = array_arg(func(x, ax), "apply_over_axes")
        if aval_of(y).ndim == nd:
            x = y
        elif aval_of(y).ndim == nd - 1:
            x = expand_dims(y, ax)
        else:
            raise ValueError(
                f"apply_over_axes: function is not returning an array of the correct shape: got {shape_of(y)} "
                f"from an input of rank {nd} (axis {ax})"
            )
    return x


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i](x)`` where ``condlist[i]`` holds (a later condition wins; an extra last
    function or constant covers "none holds", otherwise 0). Conditions may be traced: the
    index of each element's function is computed and ``lax.switch`` is vectorized over the
    elements (JAX's way), so each function is called on scalars.

    >>> x = fnp.array([-1., 2.])
    >>> fnp.piecewise(x, [x < 0, x > 0], [-1., lambda v: v * 10])
    Array([-1., 20.])
    """
    from funcgrad.transforms.control_flow import switch

    xv = array_arg(x, "piecewise")
    shp, dtype = shape_of(xv), aval_of(xv).dtype
    if is_tracer(condlist) or isinstance(condlist, np.ndarray) and condlist.ndim == len(shp) + 1:
        conds = condlist
    elif not isinstance(condlist, (list, tuple)) or (shp and not isinstance(condlist[0], (list, tuple, np.ndarray))
                                                     and not is_tracer(condlist[0])):
        conds = [condlist]
    else:
        conds = list(condlist)
    conds = array_arg(conds, "piecewise")
    if shape_of(conds)[1:] != shp:
        raise ValueError(
            f"piecewise: each condition must have the shape of x {shp}, got conditions of shape {shape_of(conds)}"
        )
    conds = cast(conds, np.dtype(bool)) if aval_of(conds).dtype != bool else conds
    nc, nf = shape_of(conds)[0], len(funclist)
    if nf == nc + 1:
        funcs = [funclist[-1]] + list(funclist[:-1])
    elif nf == nc:
        funcs = [0] + list(funclist)
    else:
        raise ValueError(f"piecewise: with {nc} condition(s), either {nc} or {nc + 1} functions are expected, got {nf}")
    # index of the last true condition (+1), or 0 where none holds: argmax of a running count
    counts = lax.cumsum(cast(lax.concatenate([full((1,) + shp, 0, bool), conds], 0), _i64), 0)
    index = lax.convert_element_type(lax.argmax(counts, 0), np.dtype(np.int32))

    def branch(f):
        if callable(f):
            return lambda v: cast(array_arg(f(v, *args, **kw), "piecewise"), dtype)
        const = np.asarray(f)
        if const.ndim:
            raise ValueError(f"piecewise: a constant in funclist must be a scalar, got shape {const.shape}")
        return lambda v: lax.convert_element_type(const.astype(dtype), dtype)

    return vectorize(switch, excluded=frozenset({1}))(index, [branch(f) for f in funcs], xv)


# --- select / choose -------------------------------------------------------------------------
def select(condlist, choicelist, default=0):
    """Per element, the entry of the first ``choicelist`` array whose condition holds, else
    ``default``; all broadcast together, dtypes promoted as NumPy.

    >>> fnp.select([fnp.arange(4) < 2, fnp.arange(4) > 2], [fnp.zeros(4), fnp.ones(4)], -1.0)
    Array([ 0.,  0., -1.,  1.])
    """
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"select: list of cases must be same length as list of conditions, got {len(choicelist)} cases and "
            f"{len(condlist)} conditions"
        )
    if len(condlist) == 0:
        raise ValueError("select: select with an empty condition list is not possible")
    conds = [array_arg(c, "select") for c in condlist]
    for i, c in enumerate(conds):
        if aval_of(c).dtype != bool:
            raise TypeError(f"select: invalid entry {i} in condlist: should be boolean, got dtype {aval_of(c).dtype}")
    choices = promote_dtypes(*[array_arg(c, "select") for c in choicelist], default)
    shp = broadcast_shapes("select", *[shape_of(v) for v in conds + choices])
    out = broadcast_to(choices[-1], shp)
    for c, v in zip(reversed(conds), reversed(choices[:-1])):  # the first true condition wins
        out = lax.select(broadcast_to(c, shp), broadcast_to(v, shp), out)
    return out


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` per element (all broadcast together). ``mode``: ``'raise'``
    (NumPy's default; needs a concrete ``a``, as in JAX), ``'wrap'`` or ``'clip'``.

    >>> fnp.choose(fnp.array([1, 0, 1]), [fnp.zeros(3), fnp.ones(3)])
    Array([1., 0., 1.])
    """
    check_out("choose", out)
    idx = array_arg(a, "choose")
    if aval_of(idx).dtype.kind not in "iub":
        raise TypeError(f"choose: `a` must hold integers, got dtype {aval_of(idx).dtype}")
    if is_tracer(choices) or isinstance(choices, np.ndarray):
        cs = [choices[i] for i in range(shape_of(choices)[0])] if shape_of(choices) else None
    else:
        cs = list(choices)
    if not cs:
        raise ValueError("choose: `choices` must hold at least one array")
    n = len(cs)
    idx = cast(idx, _i64)
    if mode == "raise":
        if is_tracer(idx):
            raise errors.ConcretizationError(
                "choose: mode='raise' needs a concrete `a` to check it, got a traced value "
                f"{idx.aval.str_short()}; use mode='wrap' or mode='clip' (as JAX requires under jit)"
            )
        if ((idx < 0) | (idx >= n)).any():
            raise ValueError(f"choose: invalid entry in choice array: `a` must lie in [0, {n}) for {n} choices")
    elif mode == "wrap":
        nn = full(shape_of(idx), n, _i64)
        idx = lax.rem(lax.add(lax.rem(idx, nn), nn), nn)
    elif mode == "clip":
        idx = lax.min(lax.max(idx, full(shape_of(idx), 0, _i64)), full(shape_of(idx), n - 1, _i64))
    else:
        raise ValueError(f"choose: mode={mode!r} not understood; must be 'raise', 'wrap' or 'clip'")
    cs = promote_dtypes(*[array_arg(c, "choose") for c in cs])
    shp = broadcast_shapes("choose", shape_of(idx), *[shape_of(c) for c in cs])
    stacked = lax.concatenate([lax.reshape(broadcast_to(c, shp), (1,) + shp) for c in cs], 0)
    picked = take_along_axis(stacked, lax.reshape(broadcast_to(idx, shp), (1,) + shp), axis=0, mode="clip")
    return lax.reshape(picked, shp)


# --- compress / extract -------------------------------------------------------------------------
def _first_true_positions(c, size):
    """Positions of the first ``size`` true entries of the 1-d bool ``c`` (0 past the
    count) and the count: a stable sort of ``not c`` brings them first."""
    n = shape_of(c)[0]
    key = lax.convert_element_type(lax.bitwise_not(c), np.dtype(np.int32))
    pos = lax.sort([key, lax.iota(_i64, (n,), 0)], num_keys=1)[1]
    if size <= n:
        pos = lax.slice(pos, (0,), (size,))
    else:
        pos = lax.pad(pos, np.zeros((), _i64), [(0, size - n, 0)])
    return pos, lax.reduce_sum(lax.convert_element_type(c, _i64), (0,))


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` (None: the flattened ``a``) where the 1-d
    ``condition`` is true. A traced ``condition`` needs ``size=`` (JAX's keyword): the
    result then has ``size`` slices, padded with ``fill_value``.

    >>> fnp.compress([False, True, True], fnp.array([[1, 2], [3, 4], [5, 6]]), axis=0)
    Array([[3, 4],
           [5, 6]])
    """
    check_out("compress", out)
    cond = array_arg(condition, "compress")
    if aval_of(cond).ndim != 1:
        raise ValueError(f"compress: condition must be a 1-d array, got shape {shape_of(cond)}")
    x = array_arg(a, "compress")
    if axis is None:
        x, axis = ravel(x), 0
    axis = canonicalize_axis(axis, aval_of(x).ndim, "compress")
    n, m = shape_of(x)[axis], shape_of(cond)[0]
    if size is None:
        c = concrete_value(cond, "compress", "condition", "Pass size= (and fill_value=) for a fixed-size result.") != 0
        if c[n:].any():
            bad = n + int(np.argmax(c[n:]))
            raise IndexError(f"compress: index {bad} is out of bounds for axis {axis} with size {n} (condition)")
        return take_static(x, axis, np.flatnonzero(c[:n]))
    size = static_int(size, "compress", "size")
    if size < 0:
        raise ValueError(f"compress: size must be non-negative, got {size}")
    c = lax.ne(cond, full((m,), 0, aval_of(cond).dtype)) if aval_of(cond).dtype != bool else cond
    c = lax.slice(c, (0,), (min(m, n),)) if m > n else lax.pad(c, np.zeros((), bool), [(0, n - m, 0)])
    out_shape = shape_of(x)[:axis] + (size,) + shape_of(x)[axis + 1:]
    fill = full(out_shape, fill_value if is_tracer(fill_value) else np.asarray(fill_value), aval_of(x).dtype)
    if n == 0 or size == 0:
        return fill
    pos, count = _first_true_positions(c, size)
    picked = take(x, pos, axis=axis, mode="clip")
    valid = lax.lt(lax.iota(_i64, (size,), 0), lax.broadcast_in_dim(count, (size,), ()))
    return lax.select(lax.broadcast_in_dim(valid, out_shape, (axis,)), picked, fill)


def extract(condition, arr, *, size=None, fill_value=0):
    """The entries of ``arr`` where ``condition`` is nonzero, flattened (``compress`` of
    the raveled arrays); a traced ``condition`` needs ``size=`` as in JAX.

    >>> fnp.extract(fnp.arange(6).reshape(2, 3) % 2 == 0, fnp.arange(6).reshape(2, 3))
    Array([0, 2, 4])
    """
    cond = array_arg(condition, "extract")
    cond = ravel(cond) if is_tracer(cond) else np.ravel(cond)  # a concrete condition stays concrete
    return compress(cond, ravel(array_arg(arr, "extract")), size=size, fill_value=fill_value)


# --- functional writers ---------------------------------------------------------------------------
def _no_inplace(fname, inplace):
    if inplace:
        raise ValueError(
            f"{fname}: funcgrad arrays are immutable, so {fname} cannot modify its argument in place; pass "
            f"inplace=False to get an updated copy (JAX's convention)"
        )


def _tile(v, k):
    """The 1-d ``v`` repeated cyclically to length ``k`` (NumPy's rule for too few values)."""
    m = shape_of(v)[0]
    return v if m == k else take_static(v, 0, np.arange(k) % m)


def place(arr, mask, vals, *, inplace=True):
    """A copy of ``arr`` whose entries where ``mask`` is true are the first values of
    ``vals``, in order, repeated if too few (NumPy's ``place``, functional as in JAX:
    ``inplace=False`` is required). ``mask`` may be traced.

    >>> fnp.place(fnp.arange(6), fnp.arange(6) > 2, fnp.array([44, 55]), inplace=False)
    Array([ 0,  1,  2, 44, 55, 44])
    """
    _no_inplace("place", inplace)
    x, m = array_arg(arr, "place"), array_arg(mask, "place")
    shp, dtype = shape_of(x), aval_of(x).dtype
    if aval_of(m).size != aval_of(x).size:
        raise ValueError(f"place: mask and data must be the same size, got shapes {shape_of(m)} and {shp}")
    v = ravel(cast(array_arg(vals, "place"), dtype))
    mflat = ravel(m)
    if aval_of(mflat).dtype != bool:
        mflat = lax.ne(mflat, full(shape_of(mflat), 0, aval_of(mflat).dtype))
    if shape_of(v)[0] == 0:
        if not is_tracer(mflat) and not np.asarray(mflat).any():
            return x
        raise ValueError("place: cannot insert from an empty `vals` where `mask` may be true")
    rank = lax.cumsum(lax.convert_element_type(mflat, _i64), 0)  # 1-based rank of each true entry
    k = aval_of(mflat).size
    which = lax.rem(lax.add(rank, full((k,), shape_of(v)[0] - 1, _i64)), full((k,), shape_of(v)[0], _i64))
    picked = take(v, which, mode="clip")
    return lax.reshape(lax.select(mflat, picked, ravel(x)), shp)


def put(a, ind, v, mode=None, *, inplace=True):
    """A copy of ``a`` with ``a.flat[ind] = v`` (``v`` repeated to the length of ``ind``;
    ``inplace=False`` required, as in JAX). ``mode``: None (JAX's default: out-of-range
    indices are dropped), ``'raise'`` (concrete ``ind``), ``'wrap'`` or ``'clip'``.

    >>> fnp.put(fnp.arange(5), [0, 2], [-44, -55], inplace=False)
    Array([-44,   1, -55,   3,   4])
    """
    _no_inplace("put", inplace)
    x = array_arg(a, "put")
    shp, dtype = shape_of(x), aval_of(x).dtype
    i = ravel(array_arg(ind, "put"))
    if aval_of(i).dtype.kind not in "iu":
        raise TypeError(f"put: indices must be integers, got dtype {aval_of(i).dtype}")
    vals = ravel(cast(array_arg(v, "put"), dtype))
    n, k = aval_of(x).size, aval_of(i).size
    if k == 0 or shape_of(vals)[0] == 0:
        return x
    if n == 0:
        raise IndexError(f"put: cannot replace elements of an empty array (indices of shape {shape_of(i)})")
    i = cast(i, _i64)
    if mode == "raise":
        if is_tracer(i):
            raise errors.ConcretizationError(
                f"put: mode='raise' needs concrete indices to check them, got a traced {i.aval.str_short()}; "
                "use mode=None (out-of-range writes dropped, JAX's default), 'wrap' or 'clip'"
            )
        bad = i[(i < -n) | (i >= n)]
        if bad.size:
            raise IndexError(f"put: index {int(bad[0])} is out of bounds for axis 0 with size {n}")
    elif mode == "wrap":
        nn = full((k,), n, _i64)
        i = lax.rem(lax.add(lax.rem(i, nn), nn), nn)
    elif mode == "clip":  # NumPy's clip: a negative index becomes 0
        i = lax.min(lax.max(i, full((k,), 0, _i64)), full((k,), n - 1, _i64))
    elif mode is not None:
        raise ValueError(f"put: mode must be None, 'raise', 'wrap' or 'clip', got {mode!r}")
    flat = at(ravel(x))[i].set(_tile(vals, k), mode="drop")
    return lax.reshape(flat, shp)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """A copy of ``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse
    of ``take_along_axis``; ``axis=None`` works on the flattened ``arr``; ``inplace=False``
    required, as in JAX). ``mode`` as in ``.at[...].set``.

    >>> fnp.put_along_axis(fnp.zeros((2, 3)), fnp.array([[1], [0]]), 9.0, axis=1, inplace=False)
    Array([[0., 9., 0.],
           [9., 0., 0.]])
    """
    _no_inplace("put_along_axis", inplace)
    x = array_arg(arr, "put_along_axis")
    shp = shape_of(x)
    i = array_arg(indices, "put_along_axis")
    if aval_of(i).dtype.kind not in "iu":
        raise TypeError(f"put_along_axis: indices must be integers, got dtype {aval_of(i).dtype}")
    if axis is None:
        if aval_of(i).ndim != 1:
            raise ValueError(f"put_along_axis: when axis=None, `indices` must be 1-d, got shape {shape_of(i)}")
        x, axis = ravel(x), 0
    nd = aval_of(x).ndim
    if aval_of(i).ndim != nd:
        raise ValueError(
            f"put_along_axis: `indices` (shape {shape_of(i)}) and `arr` (shape {shape_of(x)}) must have the same "
            "number of dimensions"
        )
    axis = canonicalize_axis(axis, nd, "put_along_axis")
    idx = tuple(i if d == axis else np.arange(n).reshape([n if e == d else 1 for e in range(nd)])
                for d, n in enumerate(shape_of(x)))
    out = at(x)[idx].set(values, mode=mode)
    return lax.reshape(out, shp)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """A copy of ``a`` with its main diagonal set to ``val`` (repeated cyclically); for a
    tall 2-d ``a``, ``wrap=True`` restarts the diagonal every ``N+1`` rows, as NumPy's.
    ``inplace=False`` is required (as in JAX).

    >>> fnp.fill_diagonal(fnp.zeros((2, 2)), 5.0, inplace=False)
    Array([[5., 0.],
           [0., 5.]])
    """
    _no_inplace("fill_diagonal", inplace)
    x = array_arg(a, "fill_diagonal")
    shp = shape_of(x)
    if len(shp) < 2:
        raise ValueError(f"fill_diagonal: array must be at least 2-d, got shape {shp}")
    if len(shp) == 2:
        step, end = shp[1] + 1, None if wrap else shp[1] * shp[1]
    else:
        if len(set(shp)) != 1:
            raise ValueError(f"fill_diagonal: all dimensions of input must be of equal length, got shape {shp}")
        step, end = 1 + int(np.cumprod(shp[:-1]).sum()), None
    size = aval_of(x).size
    pos = np.arange(0, size if end is None else min(end, size), step)
    v = ravel(cast(array_arg(val, "fill_diagonal"), aval_of(x).dtype))
    if pos.size == 0 or shape_of(v)[0] == 0:
        return x
    flat = at(ravel(x))[pos].set(_tile(v, pos.size))
    return lax.reshape(flat, shp)
