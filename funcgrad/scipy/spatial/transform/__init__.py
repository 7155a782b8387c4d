"""``funcgrad.scipy.spatial.transform``: 3-d rotations (``Rotation``) and their spherical
linear interpolation (``Slerp``), as ``jax.scipy.spatial.transform``. Both are pytrees of
arrays (a ``Rotation`` is its unit quaternions, scalar last, as SciPy), so they pass
through ``jit``, ``vmap`` and ``grad``.

>>> r = Rotation.from_euler("z", 90, degrees=True)
>>> fnp.round(r.apply(np.array([1.0, 0.0, 0.0])), 12)
Array([0., 1., 0.])
"""
from funcgrad.scipy.spatial.transform._rotation import Rotation
from funcgrad.scipy.spatial.transform._slerp import Slerp

__all__ = ["Rotation", "Slerp"]
