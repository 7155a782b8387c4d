"""``funcgrad.numpy.linalg`` (``fnp.linalg``): NumPy's linear algebra. The code is in
``funcgrad.numpy_api.linalg``; this module is the public name, so ``import
funcgrad.numpy.linalg`` and ``from funcgrad.numpy.linalg import solve`` work, as
``jax.numpy.linalg``'s do. The functions are the same objects as the implementation's."""
from funcgrad.numpy_api.linalg import *  # noqa: F401,F403
from funcgrad.numpy_api.linalg import (  # noqa: F401  (result types and the error, as NumPy's)
    EighResult,
    EigResult,
    LinAlgError,
    QRResult,
    SlogdetResult,
    SVDResult,
    __all__,  # noqa: F401
)
