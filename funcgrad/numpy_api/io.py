"""funcgrad.numpy: files, buffers and printing -- ``load``/``save``/``savez``,
``frombuffer``/``fromiter``/``fromstring``/``fromfile``/``from_dlpack``, ``array_repr``/
``array_str`` and the print options.

They are NumPy's: funcgrad's eager values are NumPy arrays, so NumPy writes and prints them
directly; the readers return funcgrad values (read-only arrays), as ``jax.numpy``'s return
JAX arrays. None of them can run under a transform (a traced value has no data to write or
print: use ``funcgrad.debug.print`` inside ``jit``).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.trace import Tracer
from funcgrad.numpy_api._util import asarray

__all__ = ["load", "save", "savez", "frombuffer", "fromiter", "fromstring", "fromfile", "from_dlpack",
           "array_repr", "array_str", "get_printoptions", "set_printoptions", "printoptions"]


def get_printoptions():
    """``numpy.get_printoptions``: the current print options (funcgrad values print as NumPy's)."""
    return np.get_printoptions()


def set_printoptions(*args, **kwargs):
    """``numpy.set_printoptions``."""
    np.set_printoptions(*args, **kwargs)


def printoptions(*args, **kwargs):
    """``numpy.printoptions``: a context manager setting print options inside it."""
    return np.printoptions(*args, **kwargs)


def _concrete(fname, x):
    if isinstance(x, Tracer):
        raise TypeError(f"{fname}: got a traced value ({x.aval}); {fname} needs concrete data, so it cannot run "
                        "under jit/grad/vmap (use funcgrad.debug.print / debug.callback inside a transform)")
    return x


def save(file, arr, allow_pickle=True):
    """``numpy.save``: write ``arr`` to a ``.npy`` file."""
    np.save(file, _concrete("save", arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds):
    """``numpy.savez``: write arrays to an uncompressed ``.npz`` archive."""
    np.savez(file, *[_concrete("savez", a) for a in args], **{k: _concrete("savez", v) for k, v in kwds.items()})


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """``numpy.array_repr`` of a funcgrad value."""
    return np.array_repr(_concrete("array_repr", arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """``numpy.array_str`` of a funcgrad value."""
    return np.array_str(_concrete("array_str", a), max_line_width, precision, suppress_small)


def load(file, *args, **kwargs):
    """``numpy.load``; an array read from a ``.npy`` file is returned as a funcgrad value
    (an ``.npz`` archive is NumPy's lazy ``NpzFile``)."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray) and out.dtype != object:
        return asarray(out, fname="load")
    return out


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """``numpy.frombuffer`` (a copy: the result never aliases ``buffer``)."""
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset).copy(), fname="frombuffer")


def fromiter(iterable, dtype, count=-1):
    """``numpy.fromiter``."""
    return asarray(np.fromiter(iterable, dtype=dtype, count=count), fname="fromiter")


def fromstring(string, dtype=float, count=-1, *, sep):
    """``numpy.fromstring`` of text (``sep`` is required, as in NumPy 2 and JAX)."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep), fname="fromstring")


def fromfile(file, dtype=float, count=-1, sep="", offset=0):
    """``numpy.fromfile``."""
    return asarray(np.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset), fname="fromfile")


def from_dlpack(x, /, *, device=None, copy=None):
    """``numpy.from_dlpack``: an array from any object with ``__dlpack__`` (a copy)."""
    return asarray(np.array(np.from_dlpack(x), copy=True), fname="from_dlpack")
