"""``lax.Precision``: JAX's precision levels for matrix products and convolutions.

On accelerators they choose how many passes a float32 product takes; on the CPU every
product is computed at the full precision of its dtype, so funcgrad accepts them (and
``precision=`` keywords) and computes the same values whatever they say.
"""
from __future__ import annotations

import enum
from typing import NamedTuple


class Precision(enum.Enum):
    """Precision of a matrix product: ``DEFAULT``, ``HIGH`` or ``HIGHEST`` (also spelled
    ``"default"``/``"bfloat16"``, ``"high"``/``"tensorfloat32"``, ``"highest"``/``"float32"``).
    Accepted everywhere JAX takes one; funcgrad's CPU products are always full precision."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "bfloat16": cls.DEFAULT, "fastest": cls.DEFAULT, "high": cls.HIGH,
                 "tensorfloat32": cls.HIGH, "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        return names.get(value.lower()) if isinstance(value, str) else None

    def __str__(self):
        return self.name


class DotAlgorithmPreset(enum.Enum):
    """JAX's named algorithms for matrix products (``precision=lax.DotAlgorithmPreset.F32_F32_F32``):
    the input and accumulation types an accelerator may use. Accepted wherever a precision is;
    funcgrad's CPU products compute at the full precision of their dtype whatever the preset."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __str__(self):
        return self.name


class DotAlgorithm(NamedTuple):
    """An explicit matrix-product algorithm (JAX's fields): the operand and accumulation types,
    component counts and operation count. Accepted as a ``precision``; CPU products here are
    computed at the full precision of their dtype."""

    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


def check_precision(fname: str, precision) -> None:
    """A ``TypeError`` naming ``fname`` unless ``precision`` is None, a ``Precision`` (or
    its name), or a pair of them (one per operand), or a dot algorithm."""
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return
    items = precision if isinstance(precision, (tuple, list)) else (precision,)
    if isinstance(precision, (tuple, list)) and len(precision) != 2:
        raise TypeError(f"{fname}: precision= takes None, a Precision or a pair of them, got {precision!r}")
    for p in items:
        if p is None or isinstance(p, (Precision, DotAlgorithmPreset, DotAlgorithm)):
            continue
        try:
            Precision(p)
        except ValueError:
            raise TypeError(f"{fname}: precision= takes None, a lax.Precision (DEFAULT, HIGH, HIGHEST) or its name, "
                            f"or a pair of them; got {precision!r}") from None


__all__ = ["DotAlgorithm", "DotAlgorithmPreset", "Precision", "check_precision"]
