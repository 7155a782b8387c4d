"""``funcgrad.nn`` activations and friends, with ``jax.nn``'s names, signatures, defaults
and derivatives at kinks.

Every function is a composite of ``funcgrad.numpy`` / ``lax`` operations, so ``grad``,
``jvp``, ``vmap``, ``jit`` (natively lowered) and ``make_jaxpr`` see through it. Dtypes
follow ``funcgrad.numpy``: functions with a transcendental part (``sigmoid``, ``gelu``,
``softmax`` ...) compute ints and bools in float64; piecewise-linear ones keep the input
dtype where JAX's formula does (``relu`` of an int array is an int array).

Derivatives at kinks, as JAX has them: ``relu'(0) = 0``; ``relu6'`` is 0 at 0 and 6
(so ``hard_sigmoid'`` is 0 at -3 and 3); ``leaky_relu'(0) = 1``; ``hard_tanh'(+-1) = 1``;
``elu'(0) = alpha``; ``celu'(0) = 1`` (JAX's ``maximum``/``minimum`` split a tie's
derivative evenly); ``sparse_plus'`` is continuous.
"""
from __future__ import annotations

import math
import operator

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import dtypes
from funcgrad.core.trace import Tracer
from funcgrad.numpy_api import _util
from funcgrad.scipy import special as _special
from funcgrad.transforms.ad_api import stop_gradient

__all__ = [
    "relu", "relu6", "elu", "selu", "celu", "gelu", "silu", "swish", "sigmoid", "softplus",
    "sparse_plus", "sparse_sigmoid", "soft_sign", "log_sigmoid", "hard_tanh", "hard_sigmoid",
    "hard_silu", "hard_swish", "leaky_relu", "glu", "squareplus", "mish", "log1mexp", "tanh",
    "identity", "softmax", "log_softmax", "logsumexp", "one_hot", "standardize",
]


def _arr(fname, x):
    _util.check_arraylike(fname, x)
    return fnp.asarray(x)


def _inexact(fname, x):
    _util.check_arraylike(fname, x)
    (x,) = _util.promote_args_inexact(fname, x)
    return fnp.asarray(x)


# --- rectifiers ------------------------------------------------------------------------------
# JAX pins relu'(0) = 0 and relu6' = 0 at 0 and 6 with custom JVPs; ``where`` chains that
# take the constant branch at the kinks give the same derivatives (to every order) with
# no custom rule to stage on each eager call. ``x == x`` lets NaN through, as ``maximum``.

def relu(x):
    """``max(x, 0)``, with ``relu'(0) = 0`` (JAX's choice).

    >>> relu(np.array([-1.0, 0.0, 2.0]))
    Array([0., 0., 2.])
    """
    x = _arr("relu", x)
    return fnp.where(x > 0, x, fnp.where(x == x, 0, x))


def relu6(x):
    """``min(max(x, 0), 6)``; its derivative is 0 at both kinks, 0 and 6 (as JAX)."""
    x = _arr("relu6", x)
    return fnp.where(x > 0, fnp.where(x < 6, x, 6.0), fnp.where(x == x, 0, x))


def leaky_relu(x, negative_slope=1e-2):
    """``x`` where ``x >= 0``, else ``negative_slope * x`` (derivative 1 at 0)."""
    x = _arr("leaky_relu", x)
    return fnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    """``x`` clipped to [-1, 1] (derivative 1 at +-1, as JAX's ``where`` chain has it)."""
    x = _arr("hard_tanh", x)
    return fnp.where(x > 1, 1, fnp.where(x < -1, -1, x))


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``."""
    return relu6(_arr("hard_sigmoid", x) + 3.0) / 6.0


def hard_silu(x):
    """``x * hard_sigmoid(x)`` (also ``hard_swish``)."""
    x = _arr("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def sparse_plus(x):
    """0 for ``x <= -1``, ``(x + 1)**2 / 4`` on (-1, 1), ``x`` for ``x >= 1``."""
    x = _arr("sparse_plus", x)
    return fnp.where(x <= -1.0, 0.0, fnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """``clip((x + 1) / 2, 0, 1)``, the derivative of ``sparse_plus``."""
    return 0.5 * fnp.clip(_arr("sparse_sigmoid", x) + 1.0, 0.0, 2.0)


# --- exponential units ---------------------------------------------------------------------

def elu(x, alpha=1.0):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    x = _arr("elu", x)
    positive = x > 0
    # The inner where keeps expm1's argument at 0 for positive x: no inf * 0 in its gradient.
    return fnp.where(positive, x, alpha * fnp.expm1(fnp.where(positive, 0.0, x)))


def selu(x):
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    x = _arr("celu", x)
    return fnp.maximum(x, 0.0) + alpha * fnp.expm1(fnp.minimum(x, 0.0) / alpha)


# --- smooth activations --------------------------------------------------------------------

def sigmoid(x):
    """``1 / (1 + exp(-x))``, accurate in both tails."""
    return _special.basic.logistic(_inexact("sigmoid", x))  # (complex too, as JAX's; expit is real-only)


def softplus(x):
    """``log(1 + exp(x))`` computed as ``logaddexp(x, 0)``: no overflow."""
    return fnp.logaddexp(_arr("softplus", x), 0)


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return -softplus(-_arr("log_sigmoid", x))


def soft_sign(x):
    """``x / (|x| + 1)``."""
    x = _arr("soft_sign", x)
    return x / (fnp.abs(x) + 1)


def silu(x):
    """``x * sigmoid(x)`` (also ``swish``)."""
    x = _inexact("silu", x)
    return x * sigmoid(x)


swish = silu


def mish(x):
    """``x * tanh(softplus(x))``."""
    x = _inexact("mish", x)
    return x * fnp.tanh(softplus(x))


def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``."""
    x = _arr("squareplus", x)
    return (x + fnp.sqrt(fnp.square(x) + b)) / 2


def log1mexp(x):
    """``log(1 - exp(-x))`` for ``x > 0``, accurate for small and large ``x``."""
    x = _inexact("log1mexp", x)
    return fnp.where(x < math.log(2.0), fnp.log(-fnp.expm1(-x)), fnp.log1p(-fnp.exp(-x)))


def gelu(x, approximate=True):
    """Gaussian error linear unit: ``x * Phi(x)`` exactly (``approximate=False``, via
    ``erfc``) or with the tanh approximation (the default, as JAX)."""
    x = _inexact("gelu", x)
    dtype = _util.aval_of(x).dtype
    if approximate:
        c = np.asarray(math.sqrt(2 / math.pi), dtype)
        return x * (0.5 * (1.0 + fnp.tanh(c * (x + 0.044715 * (x ** 3)))))
    return 0.5 * x * _special.erfc(-x * np.asarray(math.sqrt(0.5), dtype))


def tanh(x):
    """``funcgrad.numpy.tanh``, as ``jax.nn.tanh``."""
    return fnp.tanh(x)


def identity(x):
    """Returns ``x`` (as an array)."""
    return _arr("identity", x)


def glu(x, axis=-1):
    """Gated linear unit: ``a * sigmoid(b)`` for the halves ``a, b`` of ``x`` along ``axis``."""
    x = _arr("glu", x)
    shape = _util.shape_of(x)
    ax = _util.canonicalize_axis(axis, len(shape), "glu")
    if shape[ax] % 2:
        raise ValueError(f"glu: argument x of shape {shape} has an odd size {shape[ax]} along axis {axis}; "
                         "it must split into two equal halves")
    a, b = fnp.split(x, 2, axis=ax)
    return a * sigmoid(b)


# --- normalisations over an axis -----------------------------------------------------------

def _mask(fname, where, shape):
    if where is None:
        return None
    where = fnp.asarray(where)
    w_shape = _util.shape_of(where)
    try:
        _util.broadcast_shapes(fname, w_shape, shape)
    except ValueError:
        raise ValueError(
            f"{fname}: argument where of shape {w_shape} does not broadcast to x's shape {shape}"
        ) from None
    return fnp.broadcast_to(where, shape) if w_shape != shape else where


def _axes(fname, x, axis):
    return _util.canonicalize_axes(axis, len(_util.shape_of(x)), fname)


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (an int, a tuple or None for all axes).
    ``where`` masks entries out: they count for nothing and come out as 0.

    The maximum subtracted for stability is gradient-stopped (it cancels); a ``+inf``
    input gives NaN, as in JAX.
    """
    x = _inexact("softmax", x)
    axes = _axes("softmax", x, axis)
    mask = _mask("softmax", where, _util.shape_of(x))
    x_safe = x if mask is None else fnp.where(mask, x, -np.inf)
    x_max = stop_gradient(fnp.max(x_safe, axis=axes, keepdims=True))
    unnormalized = fnp.exp(x_safe - x_max)
    result = unnormalized / fnp.sum(unnormalized, axis=axes, keepdims=True)
    return result if mask is None else fnp.where(mask, result, 0.0)


def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x)`` over ``axis``; masked-out entries (``where``) are ``-inf``."""
    x = _inexact("log_softmax", x)
    axes = _axes("log_softmax", x, axis)
    mask = _mask("log_softmax", where, _util.shape_of(x))
    x_safe = x if mask is None else fnp.where(mask, x, -np.inf)
    shifted = x_safe - stop_gradient(fnp.max(x_safe, axis=axes, keepdims=True))
    e = fnp.exp(shifted)
    if mask is not None:
        e = fnp.where(mask, e, 0.0)
    result = shifted - fnp.log(fnp.sum(e, axis=axes, keepdims=True))
    return result if mask is None else fnp.where(mask, result, -np.inf)


logsumexp = _special.logsumexp


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """``(x - mean) / sqrt(variance + epsilon)``; ``mean`` and ``variance`` default to
    the statistics over ``axis`` (of the entries ``where`` selects), as ``jax.nn``:
    ``variance = mean(x**2) - mean**2``."""
    x = _inexact("standardize", x)
    axes = _axes("standardize", x, axis)
    mask = _mask("standardize", where, _util.shape_of(x))

    def average(v):
        if mask is None:
            return fnp.mean(v, axis=axes, keepdims=True)
        count = fnp.sum(mask, axis=axes, keepdims=True)
        return fnp.sum(fnp.where(mask, v, 0.0), axis=axes, keepdims=True) / count

    if mean is None:
        mean = average(x)
    if variance is None:
        variance = average(fnp.square(x)) - fnp.square(mean)
    return (x - fnp.asarray(mean)) / fnp.sqrt(fnp.asarray(variance) + epsilon)


def one_hot(x, num_classes, *, dtype=np.float64, axis=-1):
    """One-hot encode the indices ``x``: a new axis ``axis`` of length ``num_classes``
    with 1 at each index; indices outside ``[0, num_classes)`` give all zeros.

    >>> one_hot(np.array([0, 2, 5]), 3)
    Array([[1., 0., 0.],
           [0., 0., 1.],
           [0., 0., 0.]])
    """
    if isinstance(num_classes, Tracer):
        raise TypeError("one_hot: argument num_classes must be a concrete int (it sets the output shape), "
                        "got a traced value")
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError(f"one_hot: argument num_classes must be an int, got {num_classes!r}") from None
    if num_classes < 0:
        raise ValueError(f"one_hot: argument num_classes must be >= 0, got {num_classes}")
    dtype = dtypes.canonicalize(dtype, what="one_hot dtype")
    x = _arr("one_hot", x)
    shape = _util.shape_of(x)
    pos = _util.canonicalize_axis(axis, len(shape) + 1, "one_hot")
    classes = fnp.arange(num_classes, dtype=_util.aval_of(x).dtype)
    classes = fnp.reshape(classes, tuple(num_classes if i == pos else 1 for i in range(len(shape) + 1)))
    return (fnp.expand_dims(x, pos) == classes).astype(dtype)
