"""A data-parallel gradient on a local Dask cluster: logistic regression fitted by
gradient descent, the gradients summed over chunks on the workers.

    pip install 'funcgrad[dask]'
    python examples/dask_data_parallel.py [--quick]

The loss is written for the whole data set; ``funcgrad.dask.value_and_grad`` evaluates it
chunk by chunk on the workers (each worker loads the compiled program once, never your
Python source) and sums the pieces in a tree. The result is checked against
``funcgrad.value_and_grad`` on all rows in this process. To use a real cluster, change
only the ``Client(...)`` line to ``Client("tcp://scheduler-host:8786")``.
"""
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp

from _plot import QUICK


def loss(w, x, y):
    z = x @ w
    return fnp.sum(fnp.logaddexp(0.0, z) - y * z) + 0.5 * fnp.sum(w * w)


def main():
    try:
        import dask.array as da
        from distributed import Client, LocalCluster

        import funcgrad.dask as fgd
    except ImportError:
        print("this example needs the dask extra: pip install 'funcgrad[dask]'")
        return
    n, d = (20_000, 8) if QUICK else (1_000_000, 20)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rng = da.random.default_rng(0)
        x = rng.standard_normal((n, d), chunks=(n // 8, d)).persist()
        w_true = np.linspace(-1, 1, d)
        y = (x @ w_true + rng.standard_normal(n, chunks=n // 8) > 0).astype(np.float64).persist()
        value_and_grad = fgd.value_and_grad(loss, data_argnums=(1, 2), client=client)
        w = np.zeros(d)
        value, g = value_and_grad(w, x, y)
        local_value, local_g = fg.value_and_grad(loss)(w, x.compute(), y.compute())
        assert np.allclose(value, local_value, rtol=1e-10) and np.allclose(g, local_g, rtol=1e-9, atol=1e-9)
        print(f"loss at 0 on {n} rows, 8 chunks, 2 workers: {float(value):.3f} (one process: {float(local_value):.3f})")
        for it in range(10 if QUICK else 30):  # gradient descent with a fixed step
            value, g = value_and_grad(w, x, y)
            w = w - (1.0 / n) * 4.0 * np.asarray(g)
        print(f"after {it + 1} steps: loss {float(value):.3f}; "
              f"cosine(w, w_true) = {float(w @ w_true / np.linalg.norm(w) / np.linalg.norm(w_true)):.3f}")


if __name__ == "__main__":
    main()
