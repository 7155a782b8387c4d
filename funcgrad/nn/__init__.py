"""``funcgrad.nn``: neural-network activations and normalisations (``jax.nn``'s names).

>>> import funcgrad as fg, numpy as np
>>> fg.nn.relu(np.array([-1.0, 2.0]))
Array([0., 2.])
>>> fg.grad(fg.nn.relu)(0.0)          # JAX's convention at the kink
Array(0.)
"""
from funcgrad.nn import initializers  # noqa: F401,E402
from funcgrad.nn.attention import dot_product_attention, logmeanexp, scaled_dot_general, scaled_matmul  # noqa: F401,E402
from funcgrad.nn.functions import *  # noqa: F401,F403
from funcgrad.nn.functions import __all__  # noqa: F401

__all__ = [*__all__, "dot_product_attention", "logmeanexp", "scaled_dot_general", "scaled_matmul"]  # noqa: PLE0605
