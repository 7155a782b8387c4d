"""``funcgrad.custom_batching`` (``jax.custom_batching``): ``custom_vmap``, a function with its
own batching rule, and ``sequential_vmap``, a function ``vmap`` runs example by example."""
from funcgrad.transforms.custom_batching import custom_vmap, sequential_vmap  # noqa: F401

__all__ = ["custom_vmap", "sequential_vmap"]
