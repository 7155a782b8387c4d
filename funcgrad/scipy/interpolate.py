"""``funcgrad.scipy.interpolate``: ``RegularGridInterpolator``, as
``jax.scipy.interpolate``'s: linear or nearest-neighbour interpolation on a rectilinear
grid in any number of dimensions.

Per dimension the cell is found by ``searchsorted`` (clipped to the grid, so points
outside extrapolate from the edge cells when ``fill_value=None``) and the fraction within
it computed; linear interpolation sums the ``2^d`` cell corners weighted by products of
fractions, nearest picks the closer corner (ties to the lower one, as SciPy). Points
outside the grid get ``fill_value`` (NaN by default). A pytree; differentiable in the
points and the values.

>>> f = RegularGridInterpolator((np.array([0.0, 1.0, 2.0]),), np.array([0.0, 10.0, 40.0]))
>>> f(np.array([[0.5], [1.5]]))
Array([ 5., 25.])
"""
from __future__ import annotations

import itertools
import math

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api._util import asarray, check_arraylike, promote_dtypes_inexact, shape_of
from funcgrad.tree_util import register_pytree_node_class

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


@register_pytree_node_class
class RegularGridInterpolator:
    """``RegularGridInterpolator(points, values, method='linear', bounds_error=False,
    fill_value=nan)``: ``points`` a tuple of ``d`` strictly ascending 1-d grids, ``values``
    of shape ``(n_1, ..., n_d, ...)`` (trailing dims are carried along). Call it with points
    ``xi`` of shape ``(..., d)`` (or a tuple of ``d`` arrays that broadcast) to get
    ``(..., *values.shape[d:])``. ``fill_value=None`` extrapolates. ``bounds_error=True``
    is not supported (as JAX: it needs the values of the points).
    """

    def __init__(self, points, values, method="linear", bounds_error=False, fill_value=math.nan):
        if method not in _METHODS:
            raise ValueError(f"RegularGridInterpolator: method must be 'linear' or 'nearest', got {method!r}")
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True is not supported (as in JAX); "
                                      "use fill_value")
        check_arraylike("RegularGridInterpolator", values)
        (values,) = promote_dtypes_inexact(asarray(values, fname="RegularGridInterpolator"))
        grids = []
        for i, p in enumerate(points):
            check_arraylike("RegularGridInterpolator", p)
            g = asarray(p, fname="RegularGridInterpolator")
            if len(shape_of(g)) != 1 or shape_of(g)[0] < 1:
                raise ValueError(f"RegularGridInterpolator: points[{i}] must be a non-empty 1-d grid, got shape "
                                 f"{shape_of(g)}")
            if i >= len(shape_of(values)) or shape_of(g)[0] != shape_of(values)[i]:
                raise ValueError(f"RegularGridInterpolator: there are {shape_of(g)[0]} points in dimension {i}, "
                                 f"but values has shape {shape_of(values)}")
            grids.append(g.astype(fnp.result_type(values)))
        # funcgrad arrays (not NumPy's), so traced indices can index them under jit
        self.grid, self.values = tuple(fnp.asarray(g) for g in grids), fnp.asarray(values)
        self.method, self.bounds_error, self.fill_value = method, bounds_error, fill_value

    def tree_flatten(self):
        """Pytree protocol: the grids and the values are the leaves."""
        return (self.grid, self.values), (self.method, self.bounds_error, self.fill_value)

    @classmethod
    def tree_unflatten(cls, aux, children):
        """Pytree protocol."""
        obj = object.__new__(cls)
        obj.grid, obj.values = children
        obj.method, obj.bounds_error, obj.fill_value = aux
        return obj

    def __call__(self, xi, method=None):
        """The interpolated values at ``xi`` ``(..., d)`` (``method`` overrides the default)."""
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"RegularGridInterpolator: method must be 'linear' or 'nearest', got {method!r}")
        d = len(self.grid)
        if isinstance(xi, (tuple, list)) and len(xi) == d and not np.isscalar(xi[0]):
            xi = fnp.stack(fnp.broadcast_arrays(*[asarray(x, fname="RegularGridInterpolator") for x in xi]), axis=-1)
        check_arraylike("RegularGridInterpolator", xi)
        xi = asarray(xi, fname="RegularGridInterpolator").astype(fnp.result_type(self.values))
        if not shape_of(xi) or shape_of(xi)[-1] != d:
            raise ValueError(f"RegularGridInterpolator: the requested points have shape {shape_of(xi)}, they must "
                             f"have shape (..., {d}) for a {d}-dimensional grid")
        lead = shape_of(xi)[:-1]
        x = fnp.reshape(xi, (-1, d))
        idx, frac, outside = [], [], fnp.zeros(shape_of(x)[:1], bool)
        for k, g in enumerate(self.grid):
            n = shape_of(g)[0]
            xk = x[:, k]
            if n == 1:
                i, t = fnp.zeros(shape_of(xk), np.int64), fnp.zeros_like(xk)
            else:
                i = fnp.clip(fnp.searchsorted(g, xk, side="right") - 1, 0, n - 2)
                t = (xk - g[i]) / (g[i + 1] - g[i])
            idx.append(i)
            frac.append(t)
            outside = outside | (xk < g[0]) | (xk > g[n - 1])
        trailing = shape_of(self.values)[d:]
        if method == "nearest":
            corner = tuple(fnp.where(t <= 0.5, i, i + 1) if shape_of(g)[0] > 1 else i
                           for i, t, g in zip(idx, frac, self.grid))
            result = self.values[corner]
            if fnp.issubdtype(fnp.result_type(result), fnp.inexact):  # a NaN coordinate has no nearest point
                unknown = fnp.any(fnp.isnan(x), axis=-1)
                unknown = fnp.reshape(unknown, shape_of(unknown) + (1,) * len(trailing))
                result = fnp.where(unknown, fnp.asarray(math.nan, fnp.result_type(result)), result)
        else:
            result = 0.0
            for bits in itertools.product((0, 1), repeat=d):
                corner, weight = [], 1.0
                for b, i, t, g in zip(bits, idx, frac, self.grid):
                    if shape_of(g)[0] == 1:
                        if b:
                            weight = 0.0 * weight
                        corner.append(i)
                        continue
                    corner.append(i + b)
                    weight = weight * (t if b else 1.0 - t)
                w = fnp.reshape(weight, shape_of(weight) + (1,) * len(trailing)) if trailing else weight
                result = result + w * self.values[tuple(corner)]
        if self.fill_value is not None:
            mask = fnp.reshape(outside, shape_of(outside) + (1,) * len(trailing))
            result = fnp.where(mask, fnp.asarray(self.fill_value, fnp.result_type(result)), result)
        return fnp.reshape(result, lead + trailing)
