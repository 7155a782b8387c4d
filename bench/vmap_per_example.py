"""Per-example gradients of linear regression, 1000 examples x 100 features (issue #4).

    python bench/vmap_per_example.py

funcgrad's eager ``vmap(grad(loss))`` against the Python loop over examples with a
hand-written gradient (the target: beat it), autograd's loop of grad calls when
installed, and the same NumPy gradient written vectorised by hand (the floor).
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp

from common import median_time, table

try:
    import autograd
    import autograd.numpy as anp
except ImportError:
    autograd = anp = None

rng = np.random.default_rng(0)
XS = rng.normal(size=(1000, 100))
W = rng.normal(size=100)
YS = XS @ rng.normal(size=100)


def loss(np_):
    return lambda w, x, y: (np_.dot(x, w) - y) ** 2


def numpy_loop(w, xs, ys):
    return np.stack([2.0 * (x @ w - y) * x for x, y in zip(xs, ys)])


def numpy_vectorised(w, xs, ys):
    return 2.0 * (xs @ w - ys)[:, None] * xs


def main():
    per_example = fg.vmap(fg.grad(loss(fnp)), in_axes=(None, 0, 0))
    assert np.allclose(per_example(W, XS, YS), numpy_loop(W, XS, YS))
    rows = [
        ("numpy loop, hand-written grad", median_time(lambda: numpy_loop(W, XS, YS), repeat=9)),
        ("funcgrad vmap(grad) (eager)", median_time(lambda: per_example(W, XS, YS))),
        ("numpy vectorised by hand", median_time(lambda: numpy_vectorised(W, XS, YS))),
    ]
    if autograd is not None:
        ag = autograd.grad(loss(anp))
        rows.append(("autograd loop of grad", median_time(lambda: [ag(W, x, y) for x, y in zip(XS, YS)], repeat=5)))
    table("Per-example gradients, linear regression 1000 x 100", rows, "numpy loop, hand-written grad")


if __name__ == "__main__":
    main()
