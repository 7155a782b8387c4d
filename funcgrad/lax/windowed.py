"""``reduce_window`` with ``jax.lax``'s signature and XLA's semantics: pooling.

A composite of existing primitives, not a primitive: the operand is padded (interior
padding is the base dilation), each of the ``prod(window_dimensions)`` window offsets is
one strided ``slice``, and the slices are folded elementwise. jvp, transpose, vmap and
the native jit lowering (the fold fuses into one loop nest) come from those primitives.

- ``computation`` in ``lax.add``, ``lax.mul``, ``lax.max``, ``lax.min`` (or
  ``funcgrad.numpy``'s ``add``, ``multiply``, ``maximum``, ``minimum``): the padding
  holds the operation's identity and the fold is that operation. ``max``/``min`` fold with
  a select that keeps the *first* extremum of a window (NaN wins), so the derivative of
  max pooling goes to the first maximal element, as JAX's select-and-scatter gives.
- Any other ``computation(acc, x)`` (pytrees of operands and init values as in JAX) is
  folded over the window in row-major order, skipping padding and dilation holes with a
  static mask. It is called on whole arrays of window elements, so it must be
  elementwise, as a JAX reduction computation written with ``lax``/``numpy`` ops is.

Each output element is ``init_value`` combined with the window's elements (padding
elements take no part), as in XLA.

>>> lax.reduce_window(x, -fnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")  # 2x2 max pool
>>> lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9   # 3x3 average
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import lax_api as lax
from funcgrad.core import pytree
from funcgrad.core.trace import Tracer, get_aval_any
from funcgrad.lax import _util
from funcgrad.lax.convolution import padtype_to_pads

__all__ = ["reduce_window"]

_FN = "reduce_window"


def _identity(kind, dtype):
    """The padding value: the identity of the operation in ``dtype``."""
    if kind in ("add", "mul"):
        return np.asarray(kind == "mul", dtype)
    if dtype.kind == "f":
        return np.asarray(-np.inf if kind == "max" else np.inf, dtype)
    if dtype.kind == "b":
        return np.asarray(kind == "min", dtype)
    info = np.iinfo(dtype)
    return np.asarray(info.min if kind == "max" else info.max, dtype)


def _first_extremum(better):
    """A fold step that replaces ``acc`` only by a strictly better element (or a NaN), so
    a window's first extremum is the one selected (and gets the derivative)."""
    def step(acc, x):
        take = better(x, acc)
        if get_aval_any(x).dtype.kind == "f":
            take = lax.bitwise_or(take, lax.ne(x, x))
        return lax.select(take, x, acc)
    return step


_STEPS = {"add": lax.add, "mul": lax.mul, "max": _first_extremum(lax.gt), "min": _first_extremum(lax.lt)}


def _monoid_kind(computation):
    """'add'/'mul'/'max'/'min' when ``computation`` is one of the recognised functions."""
    import funcgrad.lax as flax
    import funcgrad.numpy as fnp

    table = {"add": (flax.add, fnp.add, lax.add), "mul": (flax.mul, fnp.multiply, lax.mul),
             "max": (flax.max, fnp.maximum, lax.max), "min": (flax.min, fnp.minimum, lax.min)}
    for kind, fns in table.items():
        if any(computation is f for f in fns):
            return kind
    return None


def _ints(v, n, name, where, default=1, positive=True):
    return _util.int_tuple(_FN, v, n, name, where, "operand dimension", default, positive)


def _dilate(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


def _pads(padding, shape, window, strides, window_dilation, where):
    if isinstance(padding, str):
        return padtype_to_pads(shape, [_dilate(w, d) for w, d in zip(window, window_dilation)], strides, padding)
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"{_FN}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) "
                        f"pairs, got {padding!r} ({where})") from None
    if len(pads) != len(shape):
        raise ValueError(f"{_FN}: padding needs one (low, high) pair per operand dimension ({len(shape)}), "
                         f"got {pads} ({where})")
    return pads


def _valid_mask(shape, pads, base_dilation):
    """NumPy bool array of the padded, dilated shape: True where an operand element sits."""
    mask = np.ones(shape, bool)
    for axis, ((lo, hi), d) in enumerate(zip(pads, base_dilation)):
        n = mask.shape[axis]
        dil_shape = list(mask.shape)
        dil_shape[axis] = _dilate(n, d)
        dilated = np.zeros(dil_shape, bool)
        index = [slice(None)] * mask.ndim
        index[axis] = slice(None, None, d)
        dilated[tuple(index)] = mask
        pad_width = [(0, 0)] * mask.ndim
        pad_width[axis] = (max(lo, 0), max(hi, 0))
        mask = np.pad(dilated, pad_width)
        index[axis] = slice(max(-lo, 0), mask.shape[axis] - max(-hi, 0))
        mask = mask[tuple(index)]
    return mask


def _offsets(window, window_dilation):
    for offset in np.ndindex(*window):
        yield tuple(i * d for i, d in zip(offset, window_dilation))


def _window_slice(x, start, out, strides):
    limit = [s + (o - 1) * st + 1 for s, o, st in zip(start, out, strides)]
    return lax.slice(x, start, limit, strides)


def _init_values(flat_init, flat_ops, where):
    import funcgrad.numpy as fnp

    out = []
    for v, x in zip(flat_init, flat_ops):
        dtype = get_aval_any(x).dtype
        if isinstance(v, Tracer):
            aval = get_aval_any(v)
            if aval.shape != () or aval.dtype != dtype:
                raise TypeError(f"{_FN}: init_value must be a scalar of the operand dtype {dtype}, got "
                                f"{aval.str_short()} ({where})")
            out.append(v)
            continue
        v = fnp.asarray(v)
        if np.ndim(v) != 0:
            raise TypeError(f"{_FN}: init_value must be a scalar, got shape {np.shape(v)} ({where})")
        out.append(fnp.asarray(v, dtype=dtype))
    return out


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding,
                  base_dilation=None, window_dilation=None):
    """Reduce every window of ``operand`` with ``computation``, starting from
    ``init_value`` (XLA's ReduceWindowWithGeneralPadding, as ``jax.lax.reduce_window``).

    ``window_dimensions``, ``window_strides`` (None: all 1), ``base_dilation`` and
    ``window_dilation`` have one entry per operand dimension; ``padding`` is ``'SAME'``,
    ``'SAME_LOWER'``, ``'VALID'`` or ``[(low, high), ...]`` (negative entries crop).
    ``operand`` and ``init_value`` may be matching pytrees (then ``computation`` takes and
    returns such pytrees).
    """
    import funcgrad.numpy as fnp

    flat_ops, tree = pytree.tree_flatten(operand)
    flat_init, init_tree = pytree.tree_flatten(init_value)
    if not flat_ops:
        raise ValueError(f"{_FN}: needs at least one operand")
    if tree != init_tree:
        raise ValueError(f"{_FN}: operand and init_value must have the same tree structure, got {tree} and "
                         f"{init_tree}")
    flat_ops = [fnp.asarray(x) for x in flat_ops]
    shape = get_aval_any(flat_ops[0]).shape
    where = "operand " + ", ".join(get_aval_any(x).str_short() for x in flat_ops)
    if any(get_aval_any(x).shape != shape for x in flat_ops):
        raise ValueError(f"{_FN}: all operands must have the same shape ({where})")
    init = _init_values(flat_init, flat_ops, where)
    nd = len(shape)
    window = _ints(window_dimensions, nd, "window_dimensions", where, positive=False)
    if any(w < 0 for w in window):
        raise ValueError(f"{_FN}: window_dimensions must be >= 0, got {window} ({where})")
    strides = _ints(window_strides, nd, "window_strides", where)
    base_dil = _ints(base_dilation, nd, "base_dilation", where)
    win_dil = _ints(window_dilation, nd, "window_dilation", where)
    pads = _pads(padding, shape, window, strides, win_dil, where)
    padded = [_dilate(n, d) + lo + hi for n, d, (lo, hi) in zip(shape, base_dil, pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"{_FN}: padding {pads} crops more than the (dilated) operand shape {shape} ({where})")
    eff = [_dilate(w, d) for w, d in zip(window, win_dil)]
    out = tuple((p - e) // s + 1 if p >= e else 0 for p, e, s in zip(padded, eff, strides))
    kind = _monoid_kind(computation) if len(flat_ops) == 1 else None
    if kind is not None:
        result = [_monoid_reduce(kind, flat_ops[0], init[0], window, strides, pads, base_dil, win_dil, out)]
    elif callable(computation):
        result = _general_reduce(computation, tree, flat_ops, init, window, strides, pads, base_dil, win_dil,
                                 out, where)
    else:
        raise TypeError(f"{_FN}: computation must be callable, got {computation!r}")
    return pytree.tree_unflatten(tree, result)


def _pad(x, value, pads, base_dil):
    if not any(lo or hi for lo, hi in pads) and all(d == 1 for d in base_dil):
        return x
    return lax.pad(x, value, [(lo, hi, d - 1) for (lo, hi), d in zip(pads, base_dil)])


def _monoid_reduce(kind, x, init, window, strides, pads, base_dil, win_dil, out):
    dtype = get_aval_any(x).dtype
    identity = _identity(kind, dtype)
    step = _STEPS[kind]
    init_b = lax.broadcast_in_dim(init, out, ())
    if 0 in out or 0 in window:
        return init_b
    x = _pad(x, identity, pads, base_dil)
    acc = None
    for start in _offsets(window, win_dil):
        piece = _window_slice(x, start, out, strides)
        acc = piece if acc is None else step(acc, piece)
    is_identity = not isinstance(init, Tracer) and np.array_equal(np.asarray(init), identity)
    return acc if is_identity else step(init_b, acc)


def _general_reduce(computation, tree, xs, init, window, strides, pads, base_dil, win_dil, out, where):
    acc = [lax.broadcast_in_dim(v, out, ()) for v in init]
    if 0 in out or 0 in window:
        return acc
    avals = [get_aval_any(a) for a in acc]
    valid = _valid_mask(get_aval_any(xs[0]).shape, pads, base_dil)
    xs = [_pad(x, np.zeros((), get_aval_any(x).dtype), pads, base_dil) for x in xs]
    for start in _offsets(window, win_dil):
        mask = valid[tuple(slice(s, s + (o - 1) * st + 1, st) for s, o, st in zip(start, out, strides))]
        if not mask.any():
            continue
        pieces = [_window_slice(x, start, out, strides) for x in xs]
        new = computation(pytree.tree_unflatten(tree, acc), pytree.tree_unflatten(tree, pieces))
        new, new_tree = pytree.tree_flatten(new)
        if new_tree != tree or any(get_aval_any(n).shape != a.shape or get_aval_any(n).dtype != a.dtype
                                   for n, a in zip(new, avals)):
            got = ", ".join(get_aval_any(n).str_short() for n in new)
            raise TypeError(f"{_FN}: computation must return the operands' structure, shapes and dtypes "
                            f"({', '.join(a.str_short() for a in avals)}; it must be elementwise), got {got} "
                            f"({where})")
        acc = new if mask.all() else [lax.select(mask, n, a) for n, a in zip(new, acc)]
    return acc
