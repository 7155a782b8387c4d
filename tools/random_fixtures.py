"""Write ``tests/data/jax_random_fixtures.json``: what ``jax.random`` (with
``jax_enable_x64``, funcgrad's float64/int64 defaults) returns for fixed keys, a few
shapes, dtypes and parameters per sampler. ``tests/test_random_jax_bits.py`` checks
funcgrad's samplers against the table, eagerly and under ``jit``; funcgrad never imports
JAX, only this script does.

Run with JAX's interpreter from the repository root::

    /path/to/jax-venv/bin/python tools/random_fixtures.py

Each case is ``{"fn", "key", "args", "kwargs", "dtype", "shape", "values"}``. Arguments
are JSON with three tagged forms: ``{"tuple": [...]}``, ``{"array": [...], "dtype": d}``
and ``{"key": {"kind", "seed"}}`` (a key given as an argument); ``key`` is ``{"kind":
"raw" | "typed", "seed": s}`` (``PRNGKey(s)`` or ``key(s)``). ``values`` is the result
flattened (keys as their ``uint32`` data; complex numbers as ``[re, im]`` pairs).
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "jax_random_fixtures.json"


def T(*dims):  # noqa: N802 - a shape
    return {"tuple": list(dims)}


def A(values, dtype="float64"):  # noqa: N802 - an array
    return {"array": values, "dtype": dtype}


def K(kind, seed):  # noqa: N802 - a key argument
    return {"key": {"kind": kind, "seed": seed}}


def case(fn, *args, seeds=(0, 42), kinds=("raw", "typed"), **kwargs):
    """One row per key: ``fn(key, *args, **kwargs)``."""
    return [{"fn": fn, "key": {"kind": kind, "seed": seed}, "args": list(args), "kwargs": kwargs}
            for seed in seeds for kind in kinds]


# a few shapes, dtypes and parameters per sampler; both kinds of key
CASES = [
    *case("split", 3), *case("split", T(2, 2)), *case("fold_in", 7), *case("fold_in", 2 ** 31 + 5),
    *case("key_data"), *case("clone"),
    *case("bits", T(5)), *case("bits", T(2, 3), "uint32"), *case("bits", T(4), "uint8"),
    *case("bits", T(4), "uint16"), *case("bits", T(3), "uint64"),
    *case("uniform", T(7)), *case("uniform", T(3, 2), "float32"), *case("uniform", T(4), minval=-2.0, maxval=3.0),
    *case("normal", T(500), seeds=(0, 1, 2)), *case("normal", T(6), "float32"),
    *case("normal", T(3, 2), "complex128"), *case("normal", T(4), "complex64"),
    *case("truncated_normal", -0.5, 1.5, T(8)), *case("truncated_normal", A([-3.0, 0.0, 1.0]), 2.0),
    *case("truncated_normal", -1.0, 1.0, T(5), "float32"),
    *case("lognormal", 0.5, T(6)), *case("lognormal", shape=T(4), dtype="float32"),
    *case("multivariate_normal", A([1.0, -1.0]), A([[2.0, 0.5], [0.5, 1.0]]), T(3)),
    *case("multivariate_normal", A([0.0, 1.0, 2.0]), A([[1.0, 0.2, 0.0], [0.2, 2.0, 0.3], [0.0, 0.3, 1.5]]),
          method="eigh"),
    *case("multivariate_normal", A([0.0, 0.0]), A([[1.0, 0.9], [0.9, 1.0]]), T(2), method="svd"),
    *case("orthogonal", 3), *case("orthogonal", 2, T(2)), *case("orthogonal", 2, m=4),
    *case("maxwell", T(5)), *case("double_sided_maxwell", 1.0, 2.0, T(4)),
    *case("double_sided_maxwell", A([0.0, 1.0]), 1.0),
    *case("wald", 1.5, T(6)), *case("wald", A([0.5, 2.0, 10.0])),
    *case("exponential", T(6)), *case("exponential", T(3), "float32"),
    *case("laplace", T(6)), *case("logistic", T(6)), *case("logistic", T(3), "float32"),
    *case("gumbel", T(6)), *case("gumbel", T(5), mode="high"), *case("gumbel", T(4), "float32", mode="high"),
    *case("gumbel", T(6), "float32", mode="highest"),
    *case("cauchy", T(6)), *case("pareto", 3.0, T(5)), *case("pareto", A([1.0, 2.5])),
    *case("weibull_min", 2.0, 1.5, T(5)), *case("weibull_min", 1.0, 0.5, T(3), "float32"),
    *case("rayleigh", 2.0, T(5)), *case("rayleigh", A([0.5, 1.0, 4.0])),
    *case("triangular", 0.0, 0.3, 1.0, T(6)), *case("triangular", A([-1.0, 0.0]), 0.5, A([1.0, 2.0])),
    *case("gamma", 2.5, T(6)), *case("gamma", A([0.3, 1.0, 5.0, 40.0])), *case("gamma", 0.05, T(4)),
    *case("gamma", 1.7, T(4), "float32"), *case("gamma", 0.5, T(200), seeds=(7,)),
    *case("loggamma", 0.01, T(5)), *case("loggamma", A([0.5, 3.0])),
    *case("beta", 2.0, 3.0, T(5)), *case("beta", A([0.5, 1.0]), A([0.5, 8.0])),
    *case("dirichlet", A([1.0, 2.0, 3.0])), *case("dirichlet", A([0.2, 0.2]), T(3)),
    *case("t", 3.0, T(5)), *case("t", A([1.0, 10.0])), *case("chisquare", 4.0, T(5)),
    *case("chisquare", A([0.5, 2.0, 9.0])), *case("f", 3.0, 5.0, T(4)), *case("f", A([1.0, 20.0]), 7.0),
    *case("generalized_normal", 1.0, T(5)), *case("generalized_normal", 3.0, T(4)),
    *case("ball", 3), *case("ball", 2, 1.0, T(3)), *case("ball", 4, 2.0, T(2)),
    *case("randint", T(8), 0, 10), *case("randint", T(5), -100, 100, "int32"),
    *case("randint", T(6), 0, 256, "uint8"), *case("randint", T(3, 2), A([0, 10], "int64"), 20),
    *case("randint", T(3), 5, 2), *case("randint", T(4), -(2 ** 62), 2 ** 62),
    *case("randint", T(4), 0, 2 ** 32, "uint32"), *case("randint", T(4), -128, 200, "int8"),
    *case("bernoulli", 0.3, T(10)), *case("bernoulli", A([0.1, 0.5, 0.9])), *case("bernoulli", 0.2, T(6), mode="high"),
    *case("rademacher", T(8)), *case("rademacher", T(4), "float32"),
    *case("geometric", 0.3, T(8)), *case("geometric", A([0.05, 0.5, 0.9]), dtype="int32"),
    *case("categorical", A([0.0, 1.0, 2.0])),
    *case("categorical", A([[0.0, 1.0, 2.0], [3.0, 0.0, -1.0]]), shape=T(4, 2)),
    *case("categorical", A([[0.0, 1.0], [2.0, 0.5], [1.0, 1.0]]), axis=0, shape=T(5, 2)),
    *case("categorical", A([0.0, 1.0, 2.0, 0.5, -1.0]), shape=T(3), replace=False),
    *case("categorical", A([0.0, 1.0, 2.0]), shape=T(4), mode="high"),
    *case("choice", 10, T(4)), *case("choice", A([1.0, 2.0, 3.0, 4.0, 5.0]), T(3), False),
    *case("choice", 6, T(5), True, A([0.1, 0.2, 0.3, 0.1, 0.2, 0.1])),
    *case("choice", 6, T(3), False, A([0.1, 0.2, 0.3, 0.1, 0.2, 0.1])),
    *case("choice", A([[1, 2], [3, 4], [5, 6]], "int64"), T(2), axis=0),
    *case("permutation", 10), *case("permutation", A([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])),
    *case("permutation", A([[1, 2, 3], [4, 5, 6]], "int64"), 1, True),
    *case("poisson", 3.0, T(8)), *case("poisson", A([0.0, 0.5, 5.0, 12.0, 100.0, 1000.0])),
    *case("poisson", 25.0, T(6), "int32"),
    *case("binomial", 10.0, 0.3, T(6)), *case("binomial", A([5.0, 50.0, 200.0, 1000.0]), A([0.2, 0.6, 0.5, 0.05])),
    *case("binomial", 20.0, 0.9, T(4), "float32"), *case("binomial", A([-1.0, 3.0]), A([0.5, 1.5])),
    *case("multinomial", 10.0, A([0.2, 0.3, 0.5])), *case("multinomial", A([5.0, 100.0]), A([[0.1, 0.9], [0.5, 0.5]])),
    *case("multinomial", 30.0, A([0.25, 0.25, 0.5]), shape=T(2, 3)),
]


def _key(jr, spec):
    return jr.PRNGKey(spec["seed"]) if spec["kind"] == "raw" else jr.key(spec["seed"])


def _decode(jr, v):
    if isinstance(v, dict):
        if "tuple" in v:
            return tuple(v["tuple"])
        if "array" in v:
            return np.array(v["array"], v["dtype"])
        if "key" in v:
            return _key(jr, v["key"])
    return v


def _encode(jax, jr, out):
    if hasattr(out, "dtype") and jax.dtypes.issubdtype(out.dtype, jax.dtypes.prng_key):
        out = jr.key_data(out)
    out = np.asarray(out)
    flat = out.ravel()
    if out.dtype.kind == "c":
        values = [[float(z.real), float(z.imag)] for z in flat]
    elif out.dtype.kind == "f":
        values = [float(x) for x in flat]
    elif out.dtype.kind == "b":
        values = [bool(x) for x in flat]
    else:
        values = [int(x) for x in flat]
    return {"dtype": out.dtype.name, "shape": list(out.shape), "values": values}


def main():
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.random as jr

    rows = []
    for c in CASES:
        fn = getattr(jr, c["fn"])
        args = [_decode(jr, a) for a in c["args"]]
        kwargs = {k: _decode(jr, v) for k, v in c["kwargs"].items()}
        out = fn(_key(jr, c["key"]), *args, **kwargs)
        rows.append({**c, **_encode(jax, jr, out)})
    names = sorted(n for n in dir(jr) if not n.startswith("_"))
    doc = {"jax_version": jax.__version__, "x64": True, "names": names, "cases": rows}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=None, separators=(",", ":")).replace('},{"fn"', '},\n{"fn"') + "\n")
    print(f"wrote {len(rows)} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
