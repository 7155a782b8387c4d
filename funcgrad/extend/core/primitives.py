"""Every funcgrad primitive as ``<name>_p`` (``jax.extend.core.primitives``): the objects
themselves, so ``eqn.primitive is primitives.exp_p`` tests an equation. JAX's names for
funcgrad's call primitives are aliases: ``jit_p`` is ``jit_call_p``, ``remat_p`` is
``checkpoint_call_p``. The array primitives are also ``funcgrad.lax.<name>_p``."""
from funcgrad.core.primitive import PRIMITIVES as _PRIMITIVES

globals().update({f"{name}_p": prim for name, prim in _PRIMITIVES.items()})
jit_p = _PRIMITIVES["jit_call"]
remat_p = _PRIMITIVES["checkpoint_call"]

__all__ = sorted(n for n in globals() if n.endswith("_p") and not n.startswith("_"))
