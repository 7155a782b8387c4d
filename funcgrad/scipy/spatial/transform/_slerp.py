"""``Slerp``: spherical linear interpolation of rotations between key times, as SciPy's
and JAX's: between keys ``i`` and ``i + 1``, ``r_i * Rotation.from_rotvec(alpha d_i)`` with
``d_i = (r_i^-1 r_(i+1)).as_rotvec()`` and ``alpha`` the fraction of the interval. As
JAX's (and unlike SciPy's, which raises), times outside the keys extrapolate from the first
or last interval: there is no value-dependent error under ``jit``."""
from __future__ import annotations

import funcgrad.numpy as fnp
from funcgrad.numpy_api._util import asarray, check_arraylike, promote_dtypes_inexact, shape_of
from funcgrad.scipy.spatial.transform._rotation import Rotation
from funcgrad.tree_util import register_pytree_node_class

__all__ = ["Slerp"]


@register_pytree_node_class
class Slerp:
    """``Slerp(times, rotations)``: interpolate the stack ``rotations`` (at least two) given
    at the increasing ``times``; call it with the times wanted (``Slerp.init`` is JAX's name
    for the same constructor).

    >>> key = Rotation.from_euler("z", np.array([0.0, 90.0]), degrees=True)
    >>> s = Slerp(np.array([0.0, 1.0]), key)
    >>> fnp.round(s(np.array([0.5])).as_euler("xyz", degrees=True), 10)
    Array([[ 0.,  0., 45.]])
    """

    def __init__(self, times, rotations):
        check_arraylike("Slerp", times)
        (times,) = promote_dtypes_inexact(fnp.atleast_1d(asarray(times, fname="Slerp")))
        if not isinstance(rotations, Rotation) or rotations.single:
            raise TypeError("Slerp: rotations must be a stack of Rotation (at least two)")
        if len(shape_of(times)) != 1 or shape_of(times)[0] != len(rotations) or shape_of(times)[0] < 2:
            raise ValueError(f"Slerp: times must be 1-d with one entry per rotation (at least two), got "
                             f"shape {shape_of(times)} for {len(rotations)} rotations")
        self.times = times
        self.timedelta = fnp.diff(times)
        self.rotations = rotations
        self.rotvecs = (rotations[:-1].inv() * rotations[1:]).as_rotvec()

    @classmethod
    def init(cls, times, rotations):
        """JAX's constructor: the same as ``Slerp(times, rotations)``."""
        return cls(times, rotations)

    def tree_flatten(self):
        """Pytree protocol: times, intervals, key rotations and their steps."""
        return (self.times, self.timedelta, self.rotations, self.rotvecs), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        """Pytree protocol."""
        obj = object.__new__(cls)
        obj.times, obj.timedelta, obj.rotations, obj.rotvecs = children
        return obj

    def __call__(self, times):
        """The interpolated rotations at ``times`` (a scalar gives a single rotation)."""
        check_arraylike("Slerp", times)
        t = asarray(times, fname="Slerp")
        single = not shape_of(t)
        t = fnp.atleast_1d(t)
        n = shape_of(self.times)[0]
        idx = fnp.clip(fnp.searchsorted(self.times, t, side="right") - 1, 0, n - 2)
        alpha = (t - self.times[idx]) / self.timedelta[idx]
        step = Rotation.from_rotvec(self.rotvecs[idx] * alpha[..., None])
        out = Rotation(self.rotations.quat[idx]) * step
        return out[0] if single else out
