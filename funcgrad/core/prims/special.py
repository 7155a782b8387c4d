"""Special-function primitives (erf, lgamma, digamma, ...). Filled in by the autodiff work."""
