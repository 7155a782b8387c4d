"""funcgrad.numpy: index tricks and construction helpers: ``r_``, ``c_``, ``s_``,
``index_exp``, ``mgrid``, ``ogrid``, ``ix_``, ``indices``, ``fromfunction``, the
``tri*/diag/mask_indices`` families, ``diagflat``, ``geomspace`` and ``block``.

Shapes are static, so index generators (``tril_indices``, ...) are computed on the host
from their static arguments; ``r_``/``c_``/``block``/``geomspace`` concatenate and
compute with funcgrad functions, so traced pieces stay differentiable. NumPy's matrix
directives ``'r'``/``'c'`` give a 2-d ndarray (funcgrad has no ``numpy.matrix``).
"""
from __future__ import annotations

import numpy as np

from funcgrad import errors
from funcgrad.core import dtypes
from funcgrad.core.avals import is_python_scalar
from funcgrad.numpy_api._util import asarray, aval_of, check_arraylike, is_tracer
from funcgrad.numpy_api.creation import arange, diag, linspace, logspace, meshgrid
from funcgrad.numpy_api.elementwise import log10, sign
from funcgrad.numpy_api.joining import concatenate, stack
from funcgrad.numpy_api.shape import broadcast_to, cast, moveaxis, ravel, reshape, static_int, transpose

__all__ = [
    "r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "ix_", "indices", "fromfunction",
    "tril_indices", "tril_indices_from", "triu_indices", "triu_indices_from", "diag_indices",
    "diag_indices_from", "mask_indices", "diagflat", "geomspace", "block",
]


def _kind_sig(k):
    """(dtype, weak) of an item's dtype or Python scalar, for the promotion of ``r_``/``c_``."""
    if is_python_scalar(k):
        return dtypes.python_scalar_dtype(k), True
    return np.dtype(k.dtype if isinstance(k, np.generic) else k), False


class _IndexExpression:
    """``s_[1:3, ::2]`` gives the index itself; ``index_exp[...]`` always a tuple."""

    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        return (item,) if self.maketuple and not isinstance(item, tuple) else item


s_ = _IndexExpression(False)
index_exp = _IndexExpression(True)


def _slice_range(fname, s):
    """The 1-d array a slice stands for: ``arange``, or ``linspace`` for a complex step
    (``1:5:5j`` is 5 points, end included)."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, (complex, np.complexfloating)):
        return linspace(start, s.stop, int(abs(step)))
    if s.stop is None:
        raise ValueError(f"{fname}: a slice needs a stop value, got {s!r}")
    return arange(start, s.stop, step)


def _ndmin(x, ndmin):
    nd = aval_of(x).ndim
    return reshape(x, (1,) * (ndmin - nd) + aval_of(x).shape) if nd < ndmin else x


class _AxisConcatenator:
    """NumPy's ``r_``/``c_`` translation of index expressions into a concatenation."""

    def __init__(self, name, axis, ndmin, trans1d):
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, None
        objs, kinds = [], []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError(f"{self.name}: special directives must be the first entry, got {item!r} at {k}")
                axis, ndmin, trans1d, matrix = self._directive(item, axis, ndmin, trans1d)
                continue
            if isinstance(item, slice):
                obj = _slice_range(self.name, item)
                if ndmin > 1:
                    obj = _ndmin(obj, ndmin)
                    if trans1d != -1:
                        obj = moveaxis(obj, -1, trans1d)
                kinds.append(aval_of(obj).dtype)
            elif isinstance(item, (bool, int, float, np.generic)) and not isinstance(item, np.ndarray):
                obj = _ndmin(asarray(item, fname=self.name), ndmin)
                kinds.append(item)  # Python scalars stay weak in the result type, as NumPy
            else:
                check_arraylike(self.name, item)
                obj = asarray(item, fname=self.name)
                nd = aval_of(obj).ndim
                obj = _ndmin(obj, ndmin)
                if trans1d != -1 and nd < ndmin:
                    k2, k1 = ndmin - nd, trans1d
                    k1 = k1 + k2 + 1 if k1 < 0 else k1
                    ax = list(range(ndmin))
                    obj = transpose(obj, ax[:k1] + ax[k2:] + ax[k1:k2])
                kinds.append(aval_of(obj).dtype)
            objs.append(obj)
        if not objs:
            return np.zeros((0,), dtypes.float64)
        dt = dtypes.canonicalize(dtypes.result_type(*map(_kind_sig, kinds))[0], what=f"{self.name} result")
        res = concatenate([cast(o, dt) for o in objs], axis=axis)
        if matrix is not None and aval_of(res).ndim == 1:
            res = reshape(res, (1, -1) if matrix == "r" else (-1, 1))
        return res

    def _directive(self, item, axis, ndmin, trans1d):
        if item in ("r", "c"):
            return axis, ndmin, trans1d, item
        try:
            vec = [int(v) for v in item.split(",")]
        except ValueError:
            raise ValueError(f"{self.name}: unknown special directive {item!r}") from None
        if len(vec) > 3:
            raise ValueError(f"{self.name}: unknown special directive {item!r}")
        axis = vec[0]
        ndmin = vec[1] if len(vec) > 1 else ndmin
        trans1d = vec[2] if len(vec) > 2 else trans1d
        return axis, ndmin, trans1d, None

    def __len__(self):
        return 0


r_ = _AxisConcatenator("r_", 0, 1, -1)
c_ = _AxisConcatenator("c_", -1, 2, 0)


class _Grid:
    """``mgrid[0:3, 0:1:4j]`` (dense, stacked) and ``ogrid[...]`` (open, broadcastable)."""

    def __init__(self, name, sparse):
        self.name, self.sparse = name, sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_range(self.name, key)
        if not isinstance(key, tuple) or not all(isinstance(k, slice) for k in key):
            raise IndexError(f"{self.name}: expected slices like [0:3, 0:1:5j], got {key!r}")
        axes = [_slice_range(self.name, k) for k in key]
        dt = dtypes.promote(*[aval_of(a).dtype for a in axes])
        axes = [cast(a, dt) for a in axes]
        if self.sparse:
            n = len(axes)
            return tuple(reshape(a, tuple(-1 if i == j else 1 for j in range(n))) for i, a in enumerate(axes))
        if not axes:
            return np.zeros((0,), dt)
        return stack(meshgrid(*axes, indexing="ij"))


mgrid = _Grid("mgrid", sparse=False)
ogrid = _Grid("ogrid", sparse=True)


def ix_(*args):
    """Open mesh from 1-d sequences: the k-th result has shape ``(1, .., n_k, .., 1)``;
    a boolean sequence stands for its nonzero positions (concrete only).

    >>> [a.shape for a in fnp.ix_(np.array([0, 1]), np.array([2, 4, 5]))]
    [(2, 1), (1, 3)]
    """
    out = []
    n = len(args)
    for k, a in enumerate(args):
        check_arraylike("ix_", a)
        v = asarray(a, fname="ix_")
        if isinstance(a, (list, tuple)) and len(a) == 0:
            v = np.zeros((0,), np.int64)
        if aval_of(v).ndim != 1:
            raise ValueError(f"ix_: cross index must be 1 dimensional, got shape {aval_of(v).shape} for argument {k}")
        if aval_of(v).dtype == dtypes.bool_:
            if is_tracer(v):
                raise errors.DataDependentShapeError(
                    f"ix_: a boolean argument ({k}) stands for its nonzero positions, a data-dependent shape; "
                    f"it needs a concrete value, got {v.aval.str_short()}")
            v = np.flatnonzero(v)
        out.append(reshape(v, tuple(-1 if i == k else 1 for i in range(n))))
    return tuple(out)


def indices(dimensions, dtype=int, sparse=False):
    """Index grids of a shape: ``out[k][i0, i1, ...] == ik`` (stacked, or broadcastable
    pieces when ``sparse``).

    >>> fnp.indices((2, 3))[1]
    Array([[0, 1, 2],
           [0, 1, 2]])
    """
    dims = tuple(static_int(d, "indices", "dimensions") for d in dimensions)
    dt = dtypes.canonicalize(dtype, what="indices dtype")
    n = len(dims)
    pieces = [reshape(arange(d, dtype=dt), tuple(d if i == k else 1 for i in range(n))) for k, d in enumerate(dims)]
    if sparse:
        return tuple(pieces)
    if n == 0:
        return np.zeros((0,), dt)
    return stack([broadcast_to(p, dims) for p in pieces])


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function(*indices(shape, dtype))``: the function gets one coordinate array per axis.

    >>> fnp.fromfunction(lambda i, j: i + j, (2, 2))
    Array([[0., 1.],
           [1., 2.]])
    """
    return function(*indices(shape, dtype=dtype), **kwargs)


def _tri_mask(n, k, m, lower):
    n = static_int(n, "tril_indices" if lower else "triu_indices", "n")
    m = n if m is None else static_int(m, "tril_indices" if lower else "triu_indices", "m")
    k = static_int(k, "tril_indices" if lower else "triu_indices", "k")
    rows, cols = np.indices((n, m))
    return cols - rows <= k if lower else cols - rows >= k


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle (``col - row <= k``) of an ``n x m`` array.

    >>> fnp.tril_indices(2)
    (Array([0, 1, 1]), Array([0, 0, 1]))
    """
    return tuple(np.nonzero(_tri_mask(n, k, m, True)))


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle (``col - row >= k``).

    >>> fnp.triu_indices(2)
    (Array([0, 0, 1]), Array([0, 1, 1]))
    """
    return tuple(np.nonzero(_tri_mask(n, k, m, False)))


def _shape_2d(fname, arr):
    check_arraylike(fname, arr)
    shp = aval_of(asarray(arr, fname=fname)).shape
    if len(shp) != 2:
        raise ValueError(f"{fname}: input array must be 2-d, got shape {shp}")
    return shp


def tril_indices_from(arr, k=0):
    """``tril_indices`` for the shape of the 2-d ``arr``."""
    n, m = _shape_2d("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    """``triu_indices`` for the shape of the 2-d ``arr``."""
    n, m = _shape_2d("triu_indices_from", arr)
    return triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an ``n``-sized cube of ``ndim`` axes.

    >>> fnp.diag_indices(3)
    (Array([0, 1, 2]), Array([0, 1, 2]))
    """
    n = static_int(n, "diag_indices", "n")
    ndim = static_int(ndim, "diag_indices", "ndim")
    if n < 0:
        raise ValueError(f"diag_indices: n argument must be non-negative, got {n}")
    if ndim < 0:
        raise ValueError(f"diag_indices: ndim argument must be non-negative, got {ndim}")
    return (np.arange(n),) * ndim


def diag_indices_from(arr):
    """``diag_indices`` for ``arr``: at least 2-d, all axes of equal length."""
    check_arraylike("diag_indices_from", arr)
    shp = aval_of(asarray(arr, fname="diag_indices_from")).shape
    if len(shp) < 2:
        raise ValueError(f"diag_indices_from: input array must be at least 2-d, got shape {shp}")
    if len(set(shp)) != 1:
        raise ValueError(f"diag_indices_from: all dimensions of input must be of equal length, got shape {shp}")
    return diag_indices(shp[0], len(shp))


def mask_indices(n, mask_func, k=0):
    """Indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. ``mask_func=fnp.triu``;
    under a staging transform pass a NumPy function such as ``numpy.triu``).

    >>> fnp.mask_indices(2, fnp.triu)
    (Array([0, 0, 1]), Array([0, 1, 1]))
    """
    n = static_int(n, "mask_indices", "n")
    a = mask_func(np.ones((n, n), np.int64), k)
    if is_tracer(a):
        raise errors.DataDependentShapeError(
            f"mask_indices: mask_func returned a traced value {a.aval.str_short()} (a staging trace records even "
            "constant work), so the number of indices is not known when tracing. Pass a NumPy mask function "
            "(numpy.triu), or call mask_indices outside jit/make_jaxpr.")
    a = np.asarray(a)
    return tuple(np.nonzero(a != 0))


def diagflat(v, k=0):
    """A 2-d array with the flattened ``v`` on the ``k``-th diagonal.

    >>> fnp.diagflat(np.array([[1, 2], [3, 4]])).shape
    (4, 4)
    """
    check_arraylike("diagflat", v)
    return diag(ravel(asarray(v, fname="diagflat")), k)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` numbers spaced evenly on a log scale from ``start`` to ``stop`` (negative
    endpoints of one sign allowed; the ends are exactly ``start`` and ``stop``, as NumPy).

    >>> fnp.geomspace(1., 1000., num=4)
    Array([   1.,   10.,  100., 1000.])
    """
    check_arraylike("geomspace", start, stop)
    num = static_int(num, "geomspace", "num")
    if num < 0:
        raise ValueError(f"geomspace: number of samples, {num}, must be non-negative")
    a, b = asarray(start, fname="geomspace"), asarray(stop, fname="geomspace")
    for v in (a, b):
        if not is_tracer(v) and np.any(np.asarray(v) == 0):
            raise ValueError("geomspace: geometric sequence cannot include zero")
    dt = dtypes.result_type((aval_of(a).dtype, False), (aval_of(b).dtype, False), (dtypes.float64, True))[0]
    shp = np.broadcast_shapes(aval_of(a).shape, aval_of(b).shape)
    if is_tracer(a) or is_tracer(b):
        a, b = broadcast_to(cast(a, dt), shp), broadcast_to(cast(b, dt), shp)
        out_sign = sign(a)
        a, b = a / out_sign, b / out_sign
        la, lb = log10(a), log10(b)
    else:
        # Concrete ends are prepared in NumPy, as NumPy does (fnp.log10 is log(x)/ln(10),
        # log10(1000) = 2.9999999999999996): the same values, also under a staging trace.
        a, b = np.broadcast_to(np.asarray(a, dt), shp), np.broadcast_to(np.asarray(b, dt), shp)
        out_sign = np.sign(a)
        a, b = a / out_sign, b / out_sign
        la, lb = np.log10(a), np.log10(b)
    res = logspace(la, lb, num=num, endpoint=endpoint, base=10.0, dtype=dt)
    if num > 0:
        parts = [a[None], res[1:num - 1 if num > 1 and endpoint else num]]
        if num > 1 and endpoint:
            parts.append(b[None])
        res = concatenate(parts)
    res = res * out_sign
    if axis != 0:
        res = moveaxis(res, 0, axis)
    return res if dtype is None else cast(res, dtypes.canonicalize(dtype, what="geomspace dtype"))


def _block_info(x, path):
    """(list depth, largest array rank) of a nested-list ``block`` argument, with NumPy's
    checks: no tuples, no empty lists, the same depth everywhere."""
    if type(x) is tuple:
        raise TypeError(f"block: arrays is a tuple at arrays{path}; only lists can be used to arrange blocks, "
                        "and np.block does not allow implicit conversion from tuple to ndarray")
    if type(x) is not list:
        check_arraylike("block", x)
        return 0, aval_of(asarray(x, fname="block")).ndim
    if not x:
        raise ValueError(f"block: list at arrays{path} cannot be empty")
    infos = [_block_info(item, f"{path}[{i}]") for i, item in enumerate(x)]
    depths = {d for d, _ in infos}
    if len(depths) > 1:
        raise ValueError(f"block: list depths are mismatched at arrays{path}: found depths {sorted(depths)}")
    return 1 + infos[0][0], max(nd for _, nd in infos)


def block(arrays):
    """Assemble an array from nested lists of blocks: the innermost lists join along the
    last axis, the next ones along the second to last, and so on.

    >>> fnp.block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), np.ones((1, 1))]]).shape
    (3, 3)
    """
    depth, nd = _block_info(arrays, "")
    rank = max(depth, nd)
    todo = [(arrays, 0)]
    # An explicit post-order walk (no recursion over the nesting): leaves first.
    order = []
    while todo:
        x, d = todo.pop()
        order.append((x, d))
        if d < depth:
            todo.extend((item, d + 1) for item in x)
    done = {}
    for x, d in reversed(order):
        if d == depth:
            done[id(x), d] = _ndmin(asarray(x, fname="block"), rank)
        else:
            done[id(x), d] = concatenate([done[id(item), d + 1] for item in x], axis=-(depth - d))
    return done[id(arrays), 0]
