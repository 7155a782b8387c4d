"""DLPack exchange (``jax.dlpack``): ``from_dlpack`` takes any object with
``__dlpack__`` (a NumPy array, a PyTorch CPU tensor, ...) as a funcgrad value.

>>> import funcgrad as fg
>>> fg.dlpack.from_dlpack(np.arange(3.0))
Array([0., 1., 2.])
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.array import copied_value

__all__ = ["from_dlpack", "is_supported_dtype"]


def from_dlpack(external_array, device=None, copy=None):
    """The data of a DLPack-capable object (CPU memory) as a funcgrad value (a read-only
    array of its own: later writes to ``external_array`` do not show). Its dtype must be
    one funcgrad supports."""
    if device is not None and device != "cpu" and getattr(device, "platform", None) != "cpu":
        raise ValueError(f"from_dlpack: device {device!r} is not funcgrad's CPU device")
    arr = np.from_dlpack(external_array)
    dtypes.canonicalize(arr.dtype, what="from_dlpack array")
    return copied_value(np.array(arr, copy=True))


def is_supported_dtype(dtype) -> bool:
    """Whether arrays of ``dtype`` can come in through ``from_dlpack``."""
    try:
        dtypes.canonicalize(dtype)
    except TypeError:
        return False
    return True
