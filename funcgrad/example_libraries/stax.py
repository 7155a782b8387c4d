"""``funcgrad.example_libraries.stax``: neural networks as pairs of pure functions, as
``jax.example_libraries.stax``.

A layer is a pair ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)`` the outputs.
Combinators build networks from layers:

>>> init_fun, apply_fun = serial(Dense(64), Relu, Dense(10), LogSoftmax)
>>> out_shape, params = init_fun(random.key(0), (-1, 784))   # -1: any batch size
>>> logits = apply_fun(params, x)

Keyword arguments of ``apply_fun`` reach every layer (``rng=`` for ``Dropout``; ``serial``
and ``parallel`` split it among their layers). Convolutions and pools take NHWC inputs
unless given other dimension numbers (``GeneralConv``) or a ``spec``. As in JAX,
``Dropout(rate)`` keeps each input with probability ``rate``.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax, nn, random
from funcgrad.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = [
    "serial", "parallel", "shape_dependent", "elementwise", "Dense", "GeneralConv", "Conv", "Conv1DTranspose",
    "ConvTranspose", "GeneralConvTranspose", "BatchNorm", "Dropout", "Flatten", "Identity", "FanOut",
    "FanInSum", "FanInConcat", "MaxPool", "SumPool", "AvgPool", "Tanh", "Relu", "Exp", "LogSoftmax",
    "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu",
]


# --- layers with parameters -------------------------------------------------------------
def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: ``inputs @ W + b`` with ``W`` of shape
    ``(input_shape[-1], out_dim)``."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        return tuple(input_shape[:-1]) + (out_dim,), (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return fnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _conv_out_dim(size, window, stride, pad):
    if size is None or size < 0:  # an unknown (batch-like) size stays unknown
        return size
    return (size + pad[0] + pad[1] - window) // stride + 1


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                b_init=normal(1e-6)):
    """A convolution layer with ``lax.conv_general_dilated``'s dimension numbers
    ``(lhs_spec, rhs_spec, out_spec)``, e.g. ``("NHWC", "HWIO", "NHWC")``."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides or one)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        sizes = iter(filter_shape)
        kernel_shape = tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(sizes)
                             for c in rhs_spec)
        spatial = [c for c in lhs_spec if c not in "NC"]
        in_spatial = [input_shape[lhs_spec.index(c)] for c in spatial]
        windows = [kernel_shape[rhs_spec.index(c)] for c in (c for c in rhs_spec if c not in "IO")]
        pads = _pads(in_spatial, windows, strides, padding)
        out_sizes = {"N": input_shape[lhs_spec.index("N")], "C": out_chan}
        out_sizes.update({c: _conv_out_dim(n, w, s, p)
                          for c, n, w, s, p in zip(spatial, in_spatial, windows, strides, pads)})
        output_shape = tuple(out_sizes[c] for c in out_spec)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one, dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv.__doc__ = "A 2-d convolution layer on NHWC inputs with HWIO kernels (``GeneralConv``)."


def _pads(in_sizes, windows, strides, padding):
    if not isinstance(padding, str):
        return [tuple(p) for p in padding]
    known = [1 if n is None or n < 0 else n for n in in_sizes]  # (the pads of SAME depend on the size)
    return lax.padtype_to_pads(known, windows, strides, padding)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                         b_init=normal(1e-6)):
    """A transposed convolution layer (``lax.conv_transpose``) with the given dimension
    numbers."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides or one)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        sizes = iter(filter_shape)
        kernel_shape = tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(sizes)
                             for c in rhs_spec)
        spatial = [c for c in lhs_spec if c not in "NC"]
        windows = [kernel_shape[rhs_spec.index(c)] for c in (c for c in rhs_spec if c not in "IO")]
        out_sizes = {"N": input_shape[lhs_spec.index("N")], "C": out_chan}
        for c, w, s in zip(spatial, windows, strides):
            n = input_shape[lhs_spec.index(c)]
            out_sizes[c] = _transpose_out_dim(n, w, s, padding)
        output_shape = tuple(out_sizes[c] for c in out_spec)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


def _transpose_out_dim(size, window, stride, padding):
    if size is None or size < 0:
        return size
    if padding == "SAME":
        return size * stride
    if padding == "VALID":
        return size * stride + max(window - stride, 0)
    raise ValueError(f"ConvTranspose: padding must be 'SAME' or 'VALID' to infer shapes at init, got {padding!r}")


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
Conv1DTranspose.__doc__ = "A 1-d transposed convolution layer on NHC inputs (``GeneralConvTranspose``)."
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
ConvTranspose.__doc__ = "A 2-d transposed convolution layer on NHWC inputs (``GeneralConvTranspose``)."


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones):
    """Batch normalisation over ``axis`` (statistics of the current batch; no running
    averages), then ``gamma * z + beta`` with one parameter per remaining position."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ndim = len(np.shape(x))
        ed = tuple(None if i in axis else slice(None) for i in range(ndim))
        z = nn.standardize(x, axis, epsilon=epsilon)
        if center:
            z = z * gamma[ed] if scale else z
            return z + beta[ed]
        return gamma[ed] * z if scale else z
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Dropout: in ``mode="train"`` each input is kept with probability ``rate`` (and
    divided by ``rate``), else zeroed; ``apply_fun`` needs ``rng=``. Other modes pass the
    inputs through."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if mode != "train":
            return inputs
        if rng is None:
            raise ValueError("Dropout: apply_fun needs a PRNG key as the rng= keyword argument in mode='train' "
                             "(e.g. apply_fun(params, inputs, rng=random.key(0)))")
        keep = random.bernoulli(rng, rate, fnp.shape(inputs))
        return fnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


# --- pooling ------------------------------------------------------------------------------
def _pooling_layer(name, reducer, init_val, rescale=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        window_shape = tuple(window_shape)
        strides = tuple(strides or (1,) * len(window_shape))
        non_spatial = (0, len(window_shape) + 1) if spec is None else (spec.index("N"), spec.index("C"))
        dims, steps = window_shape, strides
        for i in sorted(non_spatial):
            dims, steps = dims[:i] + (1,) + dims[i:], steps[:i] + (1,) + steps[i:]

        def init_fun(rng, input_shape):
            pads = _pads(input_shape, dims, steps, padding)
            return tuple(_conv_out_dim(n, w, s, p) for n, w, s, p in zip(input_shape, dims, steps, pads)), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, dims, steps, padding)
            if not rescale:
                return out
            # The mean over each window's in-bounds entries (padding does not count).
            shape = fnp.shape(inputs)
            spatial = tuple(n for i, n in enumerate(shape) if i not in non_spatial)
            sizes = lax.reduce_window(fnp.ones(spatial, fnp.result_type(inputs)), 0.0, lax.add, window_shape,
                                      strides, padding)
            for i in sorted(non_spatial):
                sizes = fnp.expand_dims(sizes, i)
            return out / sizes
        return init_fun, apply_fun
    PoolingLayer.__name__ = PoolingLayer.__qualname__ = name
    PoolingLayer.__doc__ = (f"A {name[:-4].lower()} pooling layer over windows of ``window_shape`` (NHWC inputs "
                            "unless ``spec`` says otherwise), as ``lax.reduce_window``.")
    return PoolingLayer


MaxPool = _pooling_layer("MaxPool", lax.max, -np.inf)
SumPool = _pooling_layer("SumPool", lax.add, 0.0)
AvgPool = _pooling_layer("AvgPool", lax.add, 0.0, rescale=True)


# --- layers without parameters ------------------------------------------------------------
def elementwise(fun, **fun_kwargs):
    """A layer with no parameters applying ``fun(inputs, **fun_kwargs)``."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(fnp.tanh)
Relu = elementwise(nn.relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(nn.log_softmax, axis=-1)
Softmax = elementwise(nn.softmax, axis=-1)
Softplus = elementwise(nn.softplus)
Sigmoid = elementwise(nn.sigmoid)
Elu = elementwise(nn.elu)
LeakyRelu = elementwise(nn.leaky_relu)
Selu = elementwise(nn.selu)
Gelu = elementwise(nn.gelu)


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()

    def apply_fun(params, inputs, **kwargs):
        return fnp.reshape(inputs, (fnp.shape(inputs)[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs
    return init_fun, apply_fun


Identity = _identity()


def FanOut(num):
    """A layer whose output is ``num`` copies of its input (a list)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return functools.reduce(operator.add, inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
    """A layer concatenating its list of inputs along ``axis``."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        return fnp.concatenate(inputs, axis)
    return init_fun, apply_fun


# --- combinators --------------------------------------------------------------------------
def serial(*layers):
    """The layers one after another; ``params`` is a list with one entry per layer."""
    count = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, count) if rng is not None else (None,) * count
        for fun, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """The layers side by side: input, output shape and ``params`` are sequences with one
    entry per layer (use with ``FanOut`` and ``FanInSum``/``FanInConcat``)."""
    count = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, count)
        results = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return tuple(r[0] for r in results), tuple(r[1] for r in results)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, count) if rng is not None else (None,) * count
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by ``make_layer(input_shape)`` once the input shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(fnp.shape(inputs))[1](params, inputs, **kwargs)
    return init_fun, apply_fun
