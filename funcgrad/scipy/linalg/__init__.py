"""``funcgrad.scipy.linalg``: SciPy's linear algebra with SciPy's conventions (upper
``cholesky`` by default, ``qr(mode='full')``, ``lu`` returning ``P`` with
``a = P @ L @ U``), differentiable, batched over leading dims and compiled under ``jit``.

>>> from funcgrad.scipy import linalg
>>> linalg.expm(np.array([[0.0, 1.0], [0.0, 0.0]]))
array([[1., 1.],
       [0., 1.]])

Not provided (deliberately): ``schur``, ``eig``, ``logm``, ``funm`` and the other
functions that need complex arithmetic (funcgrad has no complex dtype); ``lu`` of tall
matrices; ``qr(mode='raw')`` and ``pivoting``; ``eigh`` subsets.
"""
from funcgrad.scipy.linalg._decomp import (
    cho_factor,
    cho_solve,
    cholesky,
    det,
    eigh,
    inv,
    lu,
    lu_factor,
    lu_solve,
    qr,
    solve,
    solve_triangular,
    svd,
)
from funcgrad.scipy.linalg._matfuncs import expm, expm_frechet, sqrtm
from funcgrad.scipy.linalg._special_matrices import block_diag, toeplitz

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "expm_frechet", "inv", "lu",
    "lu_factor", "lu_solve", "qr", "solve", "solve_triangular", "sqrtm", "svd", "toeplitz",
]
