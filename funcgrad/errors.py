"""Typed exceptions with messages that say what went wrong and how to fix it.

Messages are built when the error is raised (never ahead of time), and point at the
user's own source line where that helps (see ``core.source_info``).
"""
from __future__ import annotations

__all__ = [
    "ConcretizationError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerArrayConversionError",
    "UnexpectedTracerError",
    "LoweringError",
    "UnsupportedDtypeError",
    "TypePromotionError",
    "DataDependentShapeError",
    "NonConcreteBooleanIndexError",
    "ExportError",
    "ImmutableArrayError",
]


class ConcretizationError(TypeError):
    """A traced value was used where a concrete Python/NumPy value is required."""


class TracerBoolConversionError(ConcretizationError):
    """``bool(x)`` (an ``if``, ``while``, ``and``/``or``) on a traced value."""


class TracerIntegerConversionError(ConcretizationError):
    """``int(x)`` / ``operator.index(x)`` on a traced value."""


class TracerArrayConversionError(ConcretizationError):
    """``numpy.asarray(x)`` on a traced value."""


class DataDependentShapeError(ConcretizationError):
    """An operation whose output *shape* depends on traced values (nonzero, masks)."""


class NonConcreteBooleanIndexError(DataDependentShapeError):
    """``x[mask]`` with a traced boolean ``mask``: the result size is not known."""


class UnexpectedTracerError(Exception):
    """A tracer escaped the transformation that created it (e.g. stored in a global)."""


class LoweringError(Exception):
    """Compilation of an equation failed; the message shows the equation in context."""


class UnsupportedDtypeError(TypeError):
    """A dtype funcgrad does not support (complex, object, strings, small ints, ...)."""


class ExportError(ValueError):
    """``funcgrad.export``: a program that cannot be exported (a Python callback, an
    unregistered pytree node), or a blob that cannot be loaded (foreign, truncated,
    tampered, or of another format version)."""


class ImmutableArrayError(TypeError, ValueError):
    """An in-place change of a funcgrad value (``x[i] = v``, ``x.fill(0)``, ``out=x``): a
    ``TypeError`` as JAX raises, and a ``ValueError`` as NumPy raises for a read-only
    array, so code written for either catches it."""


class TypePromotionError(ValueError):
    """``funcgrad.numpy`` was asked to promote between different dtypes while
    ``jax_numpy_dtype_promotion`` is ``"strict"`` (``funcgrad.numpy_dtype_promotion``)."""
