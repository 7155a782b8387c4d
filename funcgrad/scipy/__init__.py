"""``funcgrad.scipy``: SciPy-compatible functions built on funcgrad primitives."""
from funcgrad.scipy import (
    special,  # noqa: F401
    stats,  # noqa: F401
)
