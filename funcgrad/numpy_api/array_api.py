"""funcgrad.numpy: the Python array API standard's spellings of NumPy functions
(``acos`` for ``arccos``, ``pow`` for ``power``, ...) and ``astype``, as ``jax.numpy``
has them. The aliases are the very same functions; the shift/invert aliases
(``bitwise_left_shift``, ``bitwise_right_shift``, ``bitwise_invert``) live in
``bits.py``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core import lax_api as lax
from funcgrad.numpy_api import elementwise as _ew
from funcgrad.numpy_api import reductions as _red
from funcgrad.numpy_api._util import asarray, aval_of, check_arraylike, shape_of

__all__ = ["__array_api_version__", "__array_namespace_info__",
           "acos", "asin", "atan", "atan2", "acosh", "asinh", "atanh", "pow", "astype", "vecdot", "matvec", "vecmat"]

acos = _ew.arccos
asin = _ew.arcsin
atan = _ew.arctan
atan2 = _ew.arctan2
acosh = _ew.arccosh
asinh = _ew.arcsinh
atanh = _ew.arctanh
pow = _ew.power  # noqa: A001 - the array API's name

# The version of the Python array API standard funcgrad.numpy follows.
__array_api_version__ = "2024.12"
_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def namespace(api_version=None):
    """``x.__array_namespace__(api_version=...)``: ``funcgrad.numpy`` for every version
    up to the one it follows."""
    if api_version is not None and api_version not in _API_VERSIONS:
        raise ValueError(f"__array_namespace__: funcgrad.numpy follows the array API standard "
                         f"{__array_api_version__}; api_version={api_version!r} is not one of {_API_VERSIONS}")
    import funcgrad.numpy as fnp  # (the public module, which imports this one)

    return fnp


_KINDS = {
    "bool": ("b",), "signed integer": ("i",), "unsigned integer": ("u",), "integral": ("i", "u"),
    "real floating": ("f",), "complex floating": ("c",), "numeric": ("i", "u", "f", "c"),
}


class _NamespaceInfo:
    """What ``funcgrad.numpy`` supports, as the array API's inspection object reports it."""

    __module__ = "funcgrad.numpy"

    def capabilities(self):
        """Boolean-mask indexing and functions with data-dependent output shapes (``unique``,
        ``nonzero``) work eagerly; under ``jit`` they need a static size, as in JAX."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        """``"cpu"``: funcgrad computes on the CPU."""
        return "cpu"

    def devices(self):
        """The devices funcgrad computes on: ``["cpu"]``."""
        return ["cpu"]

    def default_dtypes(self, *, device=None):
        """NumPy's defaults: float64, complex128, int64 (for integers and indices)."""
        _check_device(device)
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None):
        """The supported dtypes by name, all or of ``kind`` (a kind name or a tuple of them)."""
        _check_device(device)
        if kind is None:
            kinds = ("b", "i", "u", "f", "c")
        else:
            names = (kind,) if isinstance(kind, str) else tuple(kind)
            bad = [k for k in names if k not in _KINDS]
            if bad:
                raise ValueError(f"__array_namespace_info__().dtypes: unknown kind {bad[0]!r}; "
                                 f"kinds are {sorted(_KINDS)}")
            kinds = tuple(c for k in names for c in _KINDS[k])
        return {dt.name: dt for dt in dtypes.SUPPORTED if dt.kind in kinds}


def _check_device(device):
    if device not in (None, "cpu"):
        raise ValueError(f"__array_namespace_info__: funcgrad runs on the CPU only, got device={device!r}")


def __array_namespace_info__():
    """The array API's inspection object for ``funcgrad.numpy`` (``capabilities``,
    ``default_device``, ``default_dtypes``, ``devices``, ``dtypes``).

    >>> fnp.__array_namespace_info__().default_dtypes()["real floating"]
    dtype('float64')
    """
    return _NamespaceInfo()


def astype(x, dtype, /, *, copy=False, device=None):
    """``x`` converted to ``dtype`` (the array API's function form of ``x.astype``).

    Float to int casts truncate, and NaN/inf cast as compiled code does (NaN -> 0, +-inf
    clamp); the result is never weakly typed. ``copy`` is accepted for compatibility:
    funcgrad's values are read-only, so a copy is never observable. ``device`` must be
    None or ``"cpu"``.

    >>> fnp.astype(np.array([1.7, -2.5]), np.int32)
    Array([ 1, -2], dtype=int32)
    """
    check_arraylike("astype", x)
    if device not in (None, "cpu"):
        raise ValueError(f"astype: funcgrad runs on the CPU only, got device={device!r}")
    dtype = dtypes.canonicalize(dtype, what="astype dtype")
    x = asarray(x, fname="astype")
    aval = aval_of(x)
    if aval.dtype == dtype and not aval.weak_type:
        return x
    out = lax.convert_element_type(x, dtype)
    return out[()] if type(out) is np.ndarray and not out.shape else out


def _core_sizes(fname, x1, x2, d1, d2):
    """Check the contracted sizes (axis ``d1`` of x1, ``d2`` of x2; no broadcasting there)."""
    check_arraylike(fname, x1, x2)
    x1, x2 = asarray(x1, fname=fname), asarray(x2, fname=fname)
    s1, s2 = shape_of(x1), shape_of(x2)
    if len(s1) < -d1 or len(s2) < -d2 or s1[d1] != s2[d2]:
        raise ValueError(f"{fname}: shapes {s1} and {s2} do not match in the contracted dimension")
    return x1, x2


def vecdot(x1, x2, /, *, axis=-1):
    """Dot products of the vectors along ``axis`` (other axes broadcast), like
    ``numpy.vecdot`` (``x1`` is conjugated when complex).

    >>> fnp.vecdot(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 1.0]))
    Array([3., 7.])
    """
    from funcgrad.numpy_api.linalg_extra import vecdot as _vecdot

    return _vecdot(x1, x2, axis=axis)


def matvec(x1, x2, /):
    """Matrix-vector products ``x1 (..., m, n) @ x2 (..., n) -> (..., m)``, batch axes
    broadcasting (``numpy.matvec``).

    >>> fnp.matvec(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 1.0]))
    Array([3., 7.])
    """
    x1, x2 = _core_sizes("matvec", x1, x2, -1, -1)
    return _red.sum(_ew.multiply(x1, x2[..., None, :]), axis=-1)


def vecmat(x1, x2, /):
    """Vector-matrix products ``x1 (..., n) @ x2 (..., n, m) -> (..., m)``, batch axes
    broadcasting (``numpy.vecmat``).

    >>> fnp.vecmat(np.array([1.0, 1.0]), np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([4., 6.])
    """
    x1, x2 = _core_sizes("vecmat", x1, x2, -1, -2)
    return _red.sum(_ew.multiply(x1[..., :, None], x2), axis=-2)
