"""``jax.lax``'s enums and dimension-number types that funcgrad's ``lax`` functions take:
``GatherDimensionNumbers``, ``GatherScatterMode``, ``RoundingMethod``, ``RandomAlgorithm``,
``AccuracyMode``/``Tolerance`` (accuracy requests for transcendental functions),
``DotAlgorithm``/``DotAlgorithmPreset`` (product algorithms, accepted as ``precision``),
``RaggedDotDimensionNumbers``, and the type aliases ``DotDimensionNumbers``,
``ConvGeneralDilatedDimensionNumbers`` and ``PrecisionLike``.
"""
from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple, Union

from funcgrad.core.precision import DotAlgorithm, DotAlgorithmPreset, Precision
from funcgrad.lax.convolution import ConvDimensionNumbers

__all__ = [
    "AccuracyMode", "ConvGeneralDilatedDimensionNumbers", "DotAlgorithm", "DotAlgorithmPreset",
    "DotDimensionNumbers", "GatherDimensionNumbers", "GatherScatterMode", "PrecisionLike",
    "RaggedDotDimensionNumbers", "RandomAlgorithm", "RoundingMethod", "Tolerance",
]

DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]
PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision], DotAlgorithm,
                      DotAlgorithmPreset]


class GatherDimensionNumbers(NamedTuple):
    """How ``lax.gather``'s indices and slices map to the operand's axes (JAX's fields):
    ``offset_dims`` (output axes that are slice axes), ``collapsed_slice_dims`` (operand axes
    of slice size 1 left out of the output), ``start_index_map`` (the operand axis each
    index-vector entry addresses), and the batching axes (``operand_batching_dims``,
    ``start_indices_batching_dims``)."""

    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds indices of a gather or scatter: ``CLIP`` (clamp into range),
    ``FILL_OR_DROP`` (gather fills, scatter drops), ``PROMISE_IN_BOUNDS`` (the caller
    promises; funcgrad clamps, so it stays memory-safe), ``ONE_HOT`` (JAX's one-hot
    formulation of the same values as ``FILL_OR_DROP``). ``from_any`` takes a mode, its
    name (``"clip"``, ``"fill"``, ``"drop"``, ``"promise_in_bounds"``) or None (``FILL_OR_DROP``)."""

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s) -> "GatherScatterMode":
        """The mode ``s`` names (a ``GatherScatterMode``, a string or None)."""
        if isinstance(s, GatherScatterMode):
            return s
        names = {"clip": GatherScatterMode.CLIP, "fill": GatherScatterMode.FILL_OR_DROP,
                 "drop": GatherScatterMode.FILL_OR_DROP, None: GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS, "one_hot": GatherScatterMode.ONE_HOT}
        if s not in names:
            raise ValueError(f"GatherScatterMode: unknown gather mode {s!r}; one of {sorted(k for k in names if k)}")
        return names[s]


class RoundingMethod(enum.IntEnum):
    """``lax.round``'s tie rule: ``AWAY_FROM_ZERO`` (2.5 -> 3) or ``TO_NEAREST_EVEN`` (2.5 -> 2)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class RandomAlgorithm(enum.IntEnum):
    """``lax.rng_bit_generator``'s algorithm: ``RNG_DEFAULT`` and ``RNG_THREE_FRY`` run
    Threefry-2x32 here; ``RNG_PHILOX`` is refused (funcgrad has no Philox)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


class AccuracyMode(enum.Enum):
    """An accuracy request for a transcendental function (``lax.exp(x, accuracy=...)`` in
    JAX): ``HIGHEST`` or ``DEFAULT``. funcgrad's functions have one implementation each
    (float64 accurate to a few ulps)."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance(NamedTuple):
    """An accuracy request as tolerances (``atol``, ``rtol``, ``ulps``), JAX's alternative to
    ``AccuracyMode``."""

    atol: float = 0.0
    rtol: float = 0.0
    ulps: int = 0


class RaggedDotDimensionNumbers(NamedTuple):
    """``lax.ragged_dot_general``'s dimension numbers: the ``dot_general`` dimension numbers,
    the ragged axes of ``lhs`` and the group axes of ``rhs``."""

    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple
