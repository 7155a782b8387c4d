"""``Rotation``: unit quaternions ``(x, y, z, w)`` (scalar last) with SciPy's conversions.

- from a matrix: Shepperd's method (the largest of the diagonal and the trace picks the
  well-conditioned formula), as SciPy; a matrix that is not orthogonal is first replaced by
  its nearest orthogonal one ``U V^T`` from the SVD (SciPy does that too).
- rotation vectors: ``q = (sin(t/2) / t v, cos(t/2))`` with the Taylor series of
  ``sin(t/2) / t`` near 0 (and of its inverse the other way), so both are smooth at 0.
- Euler angles: products of elementary quaternions; back, Bernardes & Viollet's
  quaternion method (2022; SciPy's), which handles every axis sequence and sets the third
  angle to 0 in gimbal lock.
- ``mean``: the eigenvector of ``sum_i w_i q_i q_i^T`` with the largest eigenvalue
  (Markley et al. 2007).
"""
from __future__ import annotations

import math
import re

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy_api._util import asarray, check_arraylike, promote_dtypes_inexact, shape_of
from funcgrad.tree_util import register_pytree_node_class

__all__ = ["Rotation"]


def _float(fname, x, last=None):
    check_arraylike(fname, x)
    (x,) = promote_dtypes_inexact(asarray(x, fname=fname))
    if last is not None and (not shape_of(x) or shape_of(x)[-1] != last):
        raise ValueError(f"{fname}: expected shape (..., {last}), got {shape_of(x)}")
    return x


def compose_quat(p, q):
    """The Hamilton product ``p q`` (scalar last): the rotation ``q`` then ``p``."""
    pv, pw, qv, qw = p[..., :3], p[..., 3:], q[..., :3], q[..., 3:]
    v = pw * qv + qw * pv + fnp.cross(pv, qv)
    w = pw * qw - fnp.sum(pv * qv, axis=-1, keepdims=True)
    return fnp.concatenate([v, w], axis=-1)


def _elementary(axis, angle):
    half = 0.5 * angle
    parts = [fnp.zeros_like(half)] * 3
    parts[axis] = fnp.sin(half)
    return fnp.stack(parts + [fnp.cos(half)], axis=-1)


def _matrix_to_quat(m):
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    decision = fnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    choice = fnp.argmax(decision, axis=-1)
    cands = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None] * 4
        q[i] = 1.0 - trace + 2.0 * m[..., i, i]
        q[j] = m[..., j, i] + m[..., i, j]
        q[k] = m[..., k, i] + m[..., i, k]
        q[3] = m[..., k, j] - m[..., j, k]
        cands.append(fnp.stack(q, axis=-1))
    cands.append(fnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1],
                            1.0 + trace], axis=-1))
    q = cands[3]
    for i in range(3):
        q = fnp.where((choice == i)[..., None], cands[i], q)
    return q / fnp.linalg.norm(q, axis=-1, keepdims=True)


def _parse_seq(fname, seq):
    if not isinstance(seq, str) or not 1 <= len(seq) <= 3:
        raise ValueError(f"{fname}: seq must be a string of 1 to 3 axes, got {seq!r}")
    intrinsic = re.fullmatch(r"[XYZ]{1,3}", seq) is not None
    extrinsic = re.fullmatch(r"[xyz]{1,3}", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"{fname}: seq must be axes from 'xyz' (extrinsic) or 'XYZ' (intrinsic), got {seq!r}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"{fname}: consecutive axes must differ, got {seq!r}")
    return ["xyz".index(c) for c in seq.lower()], extrinsic


@register_pytree_node_class
class Rotation:
    """A rotation, or a stack of them, in 3 dimensions: ``Rotation(quat)`` wraps unit
    quaternions ``(..., 4)`` (scalar last) as they are; build one with ``from_quat``
    (normalises), ``from_matrix``, ``from_rotvec``, ``from_mrp``, ``from_euler``,
    ``identity``, ``random`` or ``concatenate``. Compose with ``*`` (``(p * q).apply(v) ==
    p.apply(q.apply(v))``), index a stack with ``[]``.

    >>> r = Rotation.from_rotvec(np.array([0.0, 0.0, np.pi / 2]))
    >>> fnp.round(r.as_euler("xyz", degrees=True), 12)
    Array([ 0.,  0., 90.])
    """

    def __init__(self, quat):
        self.quat = quat

    def tree_flatten(self):
        """Pytree protocol: the quaternions are the leaf."""
        return (self.quat,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        """Pytree protocol."""
        return cls(*children)

    def __repr__(self):
        return f"Rotation(quat={self.quat!r})"

    # --- construction -----------------------------------------------------------------------
    @classmethod
    def from_quat(cls, quat):
        """From quaternions ``(..., 4)``, scalar last, normalised to unit length."""
        q = _float("Rotation.from_quat", quat, 4)
        return cls(q / fnp.linalg.norm(q, axis=-1, keepdims=True))

    @classmethod
    def from_matrix(cls, matrix):
        """From rotation matrices ``(..., 3, 3)`` (non-orthogonal ones are orthogonalised
        through the SVD first, as SciPy)."""
        m = _float("Rotation.from_matrix", matrix, 3)
        if len(shape_of(m)) < 2 or shape_of(m)[-2] != 3:
            raise ValueError(f"Rotation.from_matrix: expected shape (..., 3, 3), got {shape_of(m)}")
        u, _, vt = fnp.linalg.svd(m)
        gram = fnp.matmul(m, fnp.swapaxes(m, -1, -2))
        orthogonal = fnp.all(fnp.abs(gram - np.eye(3)) <= 1e-12, axis=(-2, -1))
        m = fnp.where(orthogonal[..., None, None], m, fnp.matmul(u, vt))
        return cls(_matrix_to_quat(m))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        """From rotation vectors ``(..., 3)`` (axis times angle, radians unless ``degrees``)."""
        v = _float("Rotation.from_rotvec", rotvec, 3)
        if degrees:
            v = v * (math.pi / 180.0)
        angle = fnp.linalg.norm(v, axis=-1, keepdims=True)
        small = angle <= 1e-3
        a_big = fnp.where(small, 1.0, angle)
        a2 = angle * angle
        scale = fnp.where(small, 0.5 - a2 / 48.0 + a2 * a2 / 3840.0, fnp.sin(0.5 * a_big) / a_big)
        return cls(fnp.concatenate([scale * v, fnp.cos(0.5 * angle)], axis=-1))

    @classmethod
    def from_mrp(cls, mrp):
        """From modified Rodrigues parameters ``(..., 3)``: ``tan(angle / 4)`` times the axis."""
        p = _float("Rotation.from_mrp", mrp, 3)
        n2 = fnp.sum(p * p, axis=-1, keepdims=True)
        return cls(fnp.concatenate([2.0 * p, 1.0 - n2], axis=-1) / (1.0 + n2))

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """From Euler angles about the axes of ``seq`` (1 to 3 of 'xyz' extrinsic, or of
        'XYZ' intrinsic); ``angles`` ``(..., len(seq))`` (a scalar or ``(N,)`` for one axis)."""
        axes, extrinsic = _parse_seq("Rotation.from_euler", seq)
        a = _float("Rotation.from_euler", angles)
        if len(axes) == 1 and (not shape_of(a) or shape_of(a)[-1] != 1):
            a = a[..., None]
        if not shape_of(a) or shape_of(a)[-1] != len(axes):
            raise ValueError(f"Rotation.from_euler: angles must have shape (..., {len(axes)}) for seq {seq!r}, "
                             f"got {shape_of(a)}")
        if degrees:
            a = a * (math.pi / 180.0)
        q = _elementary(axes[0], a[..., 0])
        for i in range(1, len(axes)):
            e = _elementary(axes[i], a[..., i])
            q = compose_quat(e, q) if extrinsic else compose_quat(q, e)
        return cls(q)

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation (``num`` of them stacked, or a single one)."""
        q = np.zeros((4,) if num is None else (int(num), 4), dtype=dtype)
        q[..., 3] = 1.0
        return cls(fnp.asarray(q))

    @classmethod
    def random(cls, random_key, num=None):
        """Uniformly distributed rotations (normalised normal 4-vectors), from ``funcgrad.random``."""
        from funcgrad import random

        q = random.normal(random_key, (4,) if num is None else (int(num), 4))
        return cls.from_quat(q)

    @classmethod
    def concatenate(cls, rotations):
        """One stack of all the rotations in ``rotations`` (single ones count as one)."""
        return cls(fnp.concatenate([fnp.atleast_2d(r.quat) for r in rotations], axis=0))

    # --- conversion -------------------------------------------------------------------------
    def as_quat(self, canonical=False, scalar_first=False):
        """The quaternions ``(..., 4)``; ``canonical``: the sign with ``w >= 0`` (ties broken
        by the first non-zero of x, y, z), ``scalar_first``: ``(w, x, y, z)``."""
        q = self.quat
        if canonical:
            x, y, z, w = (q[..., i] for i in range(4))
            flip = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
            q = fnp.where(flip[..., None], -q, q)
        if scalar_first:
            q = fnp.concatenate([q[..., 3:], q[..., :3]], axis=-1)
        return q

    def as_matrix(self):
        """The rotation matrices ``(..., 3, 3)``."""
        x, y, z, w = (self.quat[..., i] for i in range(4))
        rows = [[w * w + x * x - y * y - z * z, 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), w * w - x * x + y * y - z * z, 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), w * w - x * x - y * y + z * z]]
        return fnp.stack([fnp.stack(r, axis=-1) for r in rows], axis=-2)

    def as_rotvec(self, degrees=False):
        """The rotation vectors ``(..., 3)`` (angle in [0, pi] times the unit axis)."""
        q = fnp.where((self.quat[..., 3] < 0)[..., None], -self.quat, self.quat)
        v, w = q[..., :3], q[..., 3:]
        angle = 2.0 * fnp.arctan2(fnp.linalg.norm(v, axis=-1, keepdims=True), w)
        small = angle <= 1e-3
        a_big = fnp.where(small, 1.0, angle)
        a2 = angle * angle
        scale = fnp.where(small, 2.0 + a2 / 12.0 + 7.0 * a2 * a2 / 2880.0, a_big / fnp.sin(0.5 * a_big))
        out = scale * v
        return out * (180.0 / math.pi) if degrees else out

    def as_mrp(self):
        """The modified Rodrigues parameters ``(..., 3)`` (of the quaternion with ``w >= 0``)."""
        q = fnp.where((self.quat[..., 3] < 0)[..., None], -self.quat, self.quat)
        return q[..., :3] / (1.0 + q[..., 3:])

    def as_euler(self, seq, degrees=False):
        """Euler angles ``(..., 3)`` about the three axes of ``seq`` (as ``from_euler``), in
        ``[-pi, pi]`` (the middle one in ``[0, pi]`` or ``[-pi/2, pi/2]``); in gimbal lock the
        third angle is 0."""
        axes, extrinsic = _parse_seq("Rotation.as_euler", seq)
        if len(axes) != 3:
            raise ValueError(f"Rotation.as_euler: seq must name 3 axes, got {seq!r}")
        i, j, k = axes if extrinsic else axes[::-1]
        symmetric = i == k
        if symmetric:
            k = 3 - i - j
        sign = float((i - j) * (j - k) * (k - i) // 2)
        q = self.quat
        if symmetric:
            a, b, c, d = q[..., 3], q[..., i], q[..., j], q[..., k] * sign
        else:
            a, b = q[..., 3] - q[..., j], q[..., i] + q[..., k] * sign
            c, d = q[..., j] + q[..., 3], q[..., k] * sign - q[..., i]
        middle = 2.0 * fnp.arctan2(fnp.hypot(c, d), fnp.hypot(a, b))
        half_sum, half_diff = fnp.arctan2(b, a), fnp.arctan2(d, c)
        at_zero, at_pi = fnp.abs(middle) <= 1e-7, fnp.abs(middle - math.pi) <= 1e-7
        regular = ~(at_zero | at_pi)
        locked = fnp.where(at_zero, 2.0 * half_sum, 2.0 * half_diff * (-1.0 if extrinsic else 1.0))
        first = fnp.where(regular, half_sum - half_diff, locked)  # the angle of the first-applied axis
        third = fnp.where(regular, half_sum + half_diff, 0.0)
        if not symmetric:
            third = third * sign
            middle = middle - math.pi / 2
        angles = fnp.stack([first, middle, third] if extrinsic else [third, middle, first], axis=-1)
        if not extrinsic:  # (in gimbal lock SciPy keeps the locked value in the first slot)
            angles = fnp.stack([fnp.where(regular, third, locked * (sign if not symmetric else 1.0)), middle,
                                fnp.where(regular, first, 0.0)], axis=-1)
        wrapped = fnp.remainder(angles + math.pi, 2.0 * math.pi) - math.pi
        angles = fnp.where(np.array([True, False, True]), wrapped, angles)  # (the middle is in range already)
        return angles * (180.0 / math.pi) if degrees else angles

    # --- operations -------------------------------------------------------------------------
    def apply(self, vectors, inverse=False):
        """Rotate ``vectors`` ``(..., 3)`` (by the inverse with ``inverse``); a stack of
        rotations and a stack of vectors pair up (or broadcast)."""
        v = _float("Rotation.apply", vectors, 3)
        m = self.as_matrix()
        if inverse:
            m = fnp.swapaxes(m, -1, -2)
        return fnp.matmul(m, v[..., None])[..., 0]

    def inv(self):
        """The inverse rotation(s)."""
        return Rotation(fnp.concatenate([-self.quat[..., :3], self.quat[..., 3:]], axis=-1))

    def magnitude(self):
        """The rotation angle(s) in ``[0, pi]``."""
        return 2.0 * fnp.arctan2(fnp.linalg.norm(self.quat[..., :3], axis=-1), fnp.abs(self.quat[..., 3]))

    def mean(self, weights=None):
        """The (weighted) mean rotation of a stack, as a single ``Rotation``."""
        q = fnp.reshape(self.quat, (-1, 4))
        if weights is None:
            k = fnp.matmul(fnp.transpose(q), q)
        else:
            w = fnp.ravel(_float("Rotation.mean", weights))
            k = fnp.matmul(fnp.transpose(q) * w, q)
        _, vecs = fnp.linalg.eigh(k)
        return Rotation(vecs[:, -1])

    def __mul__(self, other):
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation(compose_quat(self.quat, other.quat))

    @property
    def single(self):
        """Whether this is one rotation (not a stack)."""
        return len(shape_of(self.quat)) == 1

    def __len__(self):
        if self.single:
            raise TypeError("Single rotation has no len")
        return shape_of(self.quat)[0]

    def __getitem__(self, indexer):
        if self.single:
            raise TypeError("Single rotation is not subscriptable")
        return Rotation(self.quat[indexer])
