"""``funcgrad.experimental``: APIs JAX keeps under ``jax.experimental`` (``ode``)."""
from funcgrad.experimental import ode  # noqa: F401
