"""NumPy reference semantics for the lax-level constructs the generator emits.

The generator renders every statement twice: once against ``funcgrad.numpy``/``lax``
(the program under test) and once against ``numpy``/this module (the reference). The
loops here are plain Python, so they are obviously right; each mirrors the documented
JAX semantics of the funcgrad construct with the same name.
"""
import numpy as np


def cond(pred, true_fun, false_fun, *operands):
    return true_fun(*operands) if bool(pred) else false_fun(*operands)


def fori_loop(lower, upper, body_fun, init_val):
    val = init_val
    for i in range(lower, upper):
        val = body_fun(np.int64(i), val)
    return val


def while_loop(cond_fun, body_fun, init_val):
    val = init_val
    while bool(cond_fun(val)):
        val = body_fun(val)
    return val


def scan(f, init, xs):
    carry, ys = init, []
    for x in xs:
        carry, y = f(carry, x)
        ys.append(y)
    return carry, np.stack(ys)


def dynamic_slice(x, start_indices, slice_sizes):
    # JAX clamps each start so the slice stays inside the operand.
    idx = tuple(
        slice(s, s + n) for s, n in
        ((int(np.clip(s, 0, d - n)), n) for s, d, n in zip(start_indices, x.shape, slice_sizes))
    )
    return x[idx]


def dot(a, b):
    """``numpy.dot`` with every product computed. With an operand of one element NumPy
    calls BLAS ``axpy``, which adds nothing when that element is 0, so
    ``numpy.dot([[inf]], [0.0])`` is 0; the products make it NaN, as in ``numpy.matmul``,
    JAX and funcgrad (a NaN the generator then rejects, as any other)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim and b.ndim and (a.size == 1 or b.size == 1):
        return np.matmul(a, b)
    return np.dot(a, b)


class _AtIndex:
    def __init__(self, x, index):
        self.x, self.index = x, index

    def _apply(self, fn):
        out = np.array(self.x, copy=True)
        out[self.index] = fn(out[self.index])
        return out

    def set(self, v):
        return self._apply(lambda old: v)

    def add(self, v):
        return self._apply(lambda old: old + v)

    def mul(self, v):
        return self._apply(lambda old: old * v)

    def min(self, v):
        return self._apply(lambda old: np.minimum(old, v))

    def max(self, v):
        return self._apply(lambda old: np.maximum(old, v))


class at:
    """``ref.at(x)[i].set(v)``: the copy-on-write update JAX's ``x.at[i].set(v)`` means."""

    def __init__(self, x):
        self.x = x

    def __getitem__(self, index):
        return _AtIndex(self.x, index)
