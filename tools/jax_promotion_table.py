"""JAX's dtype promotion for every pair of funcgrad's dtypes, as a test fixture.

Reads JAX (0.10.2, with ``jax_enable_x64``, as funcgrad computes in float64 by default)
and writes ``tests/data/jax_promotion.json``, which ``tests/test_jax_promotion.py`` checks
funcgrad's JAX promotion mode (``config.update("funcgrad_promotion", "jax")``) against.
funcgrad never imports JAX; only this script does.

    /work/jaxenv/bin/python tools/jax_promotion_table.py           # rewrite the table
    /work/jaxenv/bin/python tools/jax_promotion_table.py --check   # exit 1 if it is stale

The table holds, for each ordered pair (a, b) of funcgrad's dtypes: ``jnp.promote_types(a,
b)``, ``jnp.result_type(a, b)`` and the dtype and weak flag of ``jnp.add`` on arrays of
dtypes a and b; for each dtype a and Python scalar s (``True``, ``1``, ``1.0``, ``1j``):
``jnp.result_type`` and ``jnp.add`` of an array of dtype a with s on either side; and for
each pair of Python scalars, ``jnp.add(s, t)``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "jax_promotion.json"
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]
SCALARS = {"bool": True, "int": 1, "float": 1.0, "complex": 1j}


def _out(x) -> list:
    """[dtype name, weak flag] of a JAX array."""
    import jax

    return [str(x.dtype), bool(jax.typeof(x).weak_type)]


def build() -> dict:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    arrays = {d: jnp.ones((2,), d) for d in DTYPES}
    pairs = {}
    for a in DTYPES:
        for b in DTYPES:
            pairs[f"{a},{b}"] = {
                "promote_types": str(jnp.promote_types(a, b)),
                "result_type": str(jnp.result_type(arrays[a], arrays[b])),
                "add": _out(jnp.add(arrays[a], arrays[b])),
            }
    with_scalar = {}
    for a in DTYPES:
        for name, s in SCALARS.items():
            with_scalar[f"{a},{name}"] = {
                "result_type": str(jnp.result_type(arrays[a], s)),
                "add": _out(jnp.add(arrays[a], s)),
                "radd": _out(jnp.add(s, arrays[a])),
            }
    scalars = {f"{m},{n}": _out(jnp.add(s, t)) for m, s in SCALARS.items() for n, t in SCALARS.items()}
    return {"jax_version": jax.__version__, "jax_enable_x64": True, "dtypes": DTYPES, "scalars": list(SCALARS),
            "pairs": pairs, "with_scalar": with_scalar, "scalar_pairs": scalars}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed table differs")
    args = parser.parse_args(argv)
    text = json.dumps(build(), indent=1, sort_keys=True) + "\n"
    if args.check:
        same = OUT.exists() and OUT.read_text() == text
        print("up to date" if same else f"{OUT} is stale: run this script without --check")
        return 0 if same else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
