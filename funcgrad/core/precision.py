"""``lax.Precision``: JAX's precision levels for matrix products and convolutions.

On accelerators they choose how many passes a float32 product takes; on the CPU every
product is computed at the full precision of its dtype, so funcgrad accepts them (and
``precision=`` keywords) and computes the same values whatever they say.
"""
from __future__ import annotations

import enum


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


def check_precision(fname: str, precision) -> None:
    """A ``TypeError`` naming ``fname`` unless ``precision`` is None, a ``Precision`` (or
    its name), or a pair of them (one per operand)."""
    items = precision if isinstance(precision, (tuple, list)) else (precision,)
    if isinstance(precision, (tuple, list)) and len(precision) != 2:
        raise TypeError(f"{fname}: precision= takes None, a Precision or a pair of them, got {precision!r}")
    for p in items:
        if p is None or isinstance(p, Precision):
            continue
        try:
            Precision(p)
        except ValueError:
            raise TypeError(f"{fname}: precision= takes None, a lax.Precision (DEFAULT, HIGH, HIGHEST) or its name, "
                            f"or a pair of them; got {precision!r}") from None


__all__ = ["Precision", "check_precision"]
