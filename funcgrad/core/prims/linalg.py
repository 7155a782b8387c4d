"""Linear-algebra primitives (LAPACK through NumPy in impl). Filled in by the autodiff work."""
