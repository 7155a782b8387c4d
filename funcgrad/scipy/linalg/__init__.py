"""``funcgrad.scipy.linalg``: SciPy's linear algebra with SciPy's conventions (upper
``cholesky`` by default, ``qr(mode='full')``, ``lu`` returning ``P`` with
``a = P @ L @ U``), differentiable, batched over leading dims and compiled under ``jit``.

>>> from funcgrad.scipy import linalg
>>> linalg.expm(np.array([[0.0, 1.0], [0.0, 0.0]]))
Array([[1., 1.],
       [0., 1.]])

Also the structured matrices (``circulant``, ``hankel``, ``companion``, ``pascal``,
``dft``, ...), ``polar``, ``qr_multiply``, ``eigh_tridiagonal``, and the Schur family
(``hessenberg``, ``schur``, ``rsf2csf``, ``funm``, ``solve_sylvester``; ``schur`` is built
on ``eig``, see ``_schur``'s notes on defective matrices).

Not provided (deliberately, as in JAX): ``eig`` (``funcgrad.numpy.linalg.eig`` has it),
``logm``; ``lu`` of tall matrices; ``qr(mode='raw')`` and ``pivoting``; ``eigh`` subsets.
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
from funcgrad.scipy.linalg._decomp_extra import eigh_tridiagonal, polar, qr_multiply
from funcgrad.scipy.linalg._matfuncs import expm, expm_frechet, sqrtm
from funcgrad.scipy.linalg._schur import funm, hessenberg, rsf2csf, schur, solve_sylvester
from funcgrad.scipy.linalg._special_matrices import (
    block_diag,
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion", "convolution_matrix", "det",
    "dft", "eigh", "eigh_tridiagonal", "expm", "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard",
    "hankel", "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu", "lu_factor",
    "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester",
    "solve_triangular", "sqrtm", "svd", "toeplitz",
]
