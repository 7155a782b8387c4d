"""Primitive families. Importing this package declares every primitive.

Each family file declares its primitives and, right below each one (or each family
helper), registers its rules. See ``funcgrad/core/primitive.py`` for rule signatures.
"""
from funcgrad.core.prims import elementwise, structural, indexing, reductions, dot, sort  # noqa: F401
from funcgrad.core.prims import linalg, linalg_eager, eig, special, bits, complex, fft  # noqa: F401
from funcgrad.core.prims import calls, control_flow, effects  # noqa: F401
