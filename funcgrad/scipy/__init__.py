"""``funcgrad.scipy``: SciPy-compatible functions built on funcgrad primitives."""
from funcgrad.scipy import integrate, interpolate, linalg, optimize, signal, spatial, special, stats  # noqa: F401
