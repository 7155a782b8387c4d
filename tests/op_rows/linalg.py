"""Op-table rows for funcgrad.numpy.linalg (norm).

The 2-norm of everything (``axis=None, ord=None``) is ``sqrt(x.ravel() @ x.ravel())``
in NumPy (a BLAS dot); funcgrad sums the squares with ``reduce_sum``, a different
summation order, hence ``rtol=1e-13`` there.
"""
import numpy as np

import funcgrad.numpy as fnp

from harness import rand, row

V = rand(7)
M = rand(3, 4)
T = rand(2, 3, 4)
SUMORDER = dict(rtol=1e-13)


def nrow(name, x, **kw):
    tol = {k: kw.pop(k) for k in ("rtol", "atol", "tags") if k in kw}
    return row(f"linalg.norm/{name}", lambda x: fnp.linalg.norm(x, **kw), lambda x: np.linalg.norm(x, **kw), x, **tol)


ROWS = [
    nrow("vector", V, **SUMORDER),
    nrow("vector_ord2", V, ord=2),
    nrow("vector_ord1", V, ord=1),
    nrow("vector_inf", V, ord=np.inf),
    nrow("vector_neg_inf", V, ord=-np.inf),
    nrow("vector_ord0", np.array([0.0, 1.5, 0.0, -2.0]), ord=0),
    nrow("vector_ord3", V, ord=3),
    nrow("vector_ord_half", V, ord=0.5),
    nrow("vector_ord_neg1", V, ord=-1),
    nrow("vector_ord_neg2", V, ord=-2),
    nrow("vector_f32", rand(5, dtype=np.float32), **SUMORDER),
    nrow("vector_f32_ord3", rand(5, dtype=np.float32), ord=3),
    nrow("vector_int", rand(6, dtype=np.int64), **SUMORDER),
    nrow("vector_bool", rand(6, dtype=np.bool_), ord=1),
    nrow("vector_keepdims", V, ord=1, keepdims=True),
    nrow("axis0", M, axis=0),
    nrow("axis_neg", T, axis=-1, ord=np.inf),
    nrow("axis_p_keepdims", T, axis=1, ord=2.5, keepdims=True),
    nrow("all_2d", M, **SUMORDER),
    nrow("all_3d", T, **SUMORDER),
    nrow("all_3d_keepdims", T, keepdims=True, **SUMORDER),
    nrow("all_0d", np.float64(-3.0)),
    nrow("all_empty", rand(0, 3), tags={"no_grad": "the norm of an empty array is 0, where it is not differentiable"}),
    nrow("matrix_fro", M, ord="fro"),
    nrow("matrix_1", M, ord=1),
    nrow("matrix_neg1", M, ord=-1),
    nrow("matrix_inf", M, ord=np.inf),
    nrow("matrix_neg_inf", M, ord=-np.inf),
    nrow("matrix_int", rand(3, 3, dtype=np.int64), ord=1),
    nrow("batched_fro", T, axis=(1, 2)),
    nrow("batched_1_swapped", T, ord=1, axis=(2, 0)),
    nrow("batched_inf", T, ord=np.inf, axis=(0, 2)),
    nrow("batched_neg_inf_keepdims", T, ord=-np.inf, axis=(-1, -2), keepdims=True),
    nrow("batched_f32", rand(2, 3, 3, dtype=np.float32), ord="fro", axis=(1, 2)),
]
