"""``funcgrad.scipy``: SciPy-compatible functions built on funcgrad primitives."""
from funcgrad.scipy import integrate, linalg, optimize, signal, special, stats  # noqa: F401
