"""JAX names funcgrad leaves out on purpose, with the reason: the one list of them.

``tools/jax_names.py`` reports these apart from the missing names and writes the page
docs/reference/jax-differences.md from this module (a test checks the page is current).
"""
OMITTED: dict[str, dict[str, str]] = {}

NARROW_FLOATS = ""
