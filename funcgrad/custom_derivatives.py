"""``funcgrad.custom_derivatives``: the custom-rule decorators under the module path JAX
gives them (``from jax.custom_derivatives import custom_jvp``); the same objects as
``funcgrad.custom_jvp`` etc."""
from funcgrad.transforms.custom import custom_jvp, custom_vjp
from funcgrad.transforms.custom_gradient import closure_convert, custom_gradient

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "closure_convert"]
