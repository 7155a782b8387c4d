"""``funcgrad.example_libraries``: the small optimizer and neural-network libraries of
``jax.example_libraries`` (``optimizers``, ``stax``), with the same names and calling
conventions, so programs written against them run after changing the imports."""
from funcgrad.example_libraries import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
