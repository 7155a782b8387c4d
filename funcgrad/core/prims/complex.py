"""Complex-number primitives: ``real``, ``imag``, ``complex`` (x + iy from two reals) and
``conj``. All four are linear (over the reals), so each registers a transpose rule; that
transpose is the *linear* one JAX uses, for the pairing <a, b> = Re(sum(a * b)) -- no
conjugation anywhere (``vjp`` of ``z -> c * z`` is ``ct -> c * ct``). With it, ``grad``
of a real-valued f(x + iy) is df/dx - i df/dy (= 2 df/dz, the conjugate of the ascent
direction): for f(z) = |z|**2, grad f(3+4j) == 6-8j, as JAX (docs/guide/complex.md).

The other elementwise primitives (``elementwise.py``) accept complex operands where
NumPy's ufunc does; their JVP rules are holomorphic formulas, which hold as written.
Lower rules: ``funcgrad/lowering/complex_math.py``.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import ad_util as ad
from funcgrad.core import dtypes
from funcgrad.core.avals import ShapedArray
from funcgrad.core.batch_util import defbatch_elementwise
from funcgrad.core.primitive import Primitive
from funcgrad.core.prims._checks import check_kind, check_same
from funcgrad.core.trace import get_aval_any


def _complex_unop(name: str, impl, out_dtype) -> Primitive:
    """A unary elementwise primitive on complex operands; ``out_dtype(dtype)``."""
    prim = Primitive(name, elementwise=True)
    prim.def_impl(impl)

    @prim.def_abstract_eval
    def abstract_eval(x: ShapedArray) -> ShapedArray:
        check_kind(name, x, "c")
        return ShapedArray(x.shape, out_dtype(x.dtype), False)

    prim.kinds = "c"
    defbatch_elementwise(prim)
    return prim


def _real_impl(x):
    return np.real(x).copy()  # (NumPy's real/imag are views: results are values)


def _imag_impl(x):
    return np.imag(x).copy()


# --- real: Re z; transpose ct -> ct + 0j -----------------------------------------------
real_p = _complex_unop("real", _real_impl, dtypes.real_dtype)
ad.deflinear(real_p, lambda ct, x: [complex_(ct, _zeros_like(ct))])

# --- imag: Im z = Re(-i z); transpose ct -> -i ct ----------------------------------------
imag_p = _complex_unop("imag", _imag_impl, dtypes.real_dtype)
ad.deflinear(imag_p, lambda ct, x: [complex_(_zeros_like(ct), neg(ct))])

# --- conj: Re(ct conj z) = Re(conj(ct) z), so the transpose is conj too ------------------
conj_p = _complex_unop("conj", np.conjugate, lambda dt: dt)
ad.deflinear(conj_p, lambda ct, x: [conj_p.bind(ct)])

# --- complex: x + iy from two reals of one dtype (float32 -> complex64) -----------------
complex_p = Primitive("complex", elementwise=True)


@complex_p.def_impl
def _complex_impl(x, y):
    x, y = np.asarray(x), np.asarray(y)
    out = np.empty(x.shape, dtypes.complex_dtype(x.dtype))
    out.real, out.imag = x, y  # (x + 1j * y would turn inf * 0j into NaN)
    return out if out.ndim else out[()]


@complex_p.def_abstract_eval
def _complex_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    check_same("complex", (x, y))
    check_kind("complex", x, "f")
    return ShapedArray(x.shape, dtypes.complex_dtype(x.dtype), False)


def _complex_transpose(ct, x, y):
    # <ct, x + iy> = Re(ct) x - Im(ct) y
    return [real_p.bind(ct) if ad.is_undefined(x) else None,
            neg(imag_p.bind(ct)) if ad.is_undefined(y) else None]


complex_p.kinds = "f"
ad.deflinear(complex_p, _complex_transpose)
defbatch_elementwise(complex_p)


# --- helpers (primitives only, so the rules above trace) ---------------------------------
def complex_(x, y):
    return complex_p.bind(x, y)


def neg(x):
    from funcgrad.core.prims.elementwise import neg_p

    return neg_p.bind(x)


def _zeros_like(x):
    return ad.zeros_like_aval(ad.tangent_aval(get_aval_any(x)))


__all__ = ["real_p", "imag_p", "conj_p", "complex_p"]
