"""The ``jax_debug_nans`` / ``jax_debug_infs`` checks (``config.update``): a
``FloatingPointError`` naming where a NaN or an infinity appeared.

Checked: every output of a jitted function's call (the native jit entry defers to the
Python path while a check is on), and every primitive run eagerly through ``bind``
(``funcgrad.lax`` functions, the eager work of ``grad``/``vmap``). Not checked: the eager
fast paths of ``funcgrad.numpy`` (plain NumPy on plain inputs) and NumPy operators on eager
arrays; to check such code, put it under ``jit``.
"""
from __future__ import annotations

import numpy as np

from funcgrad import config


def check(what: str, values) -> None:
    """Raise ``FloatingPointError`` if a float or complex array among ``values`` (an array,
    or a list/tuple of them) has a NaN (``jax_debug_nans``) or an infinity
    (``jax_debug_infs``); ``what`` names where it was computed."""
    for i, v in enumerate(values if isinstance(values, (list, tuple)) else (values,)):
        if not isinstance(v, (np.ndarray, np.generic)) or v.dtype.kind not in "fc":
            continue
        where = what if not isinstance(values, (list, tuple)) or len(values) == 1 else f"{what} (output {i})"
        if config.DEBUG_NANS[0] and np.isnan(v).any():
            raise FloatingPointError(f"invalid value (nan) encountered in {where} (jax_debug_nans is on)")
        if config.DEBUG_INFS[0] and np.isinf(v).any():
            raise FloatingPointError(f"divide by zero or overflow (inf) encountered in {where} "
                                     "(jax_debug_infs is on)")
