"""Line budget for funcgrad's product code (run by ``.ci/run``).

Prints the lines of product code per layer (``funcgrad/core``, ``transforms``,
``lowering``, ``numpy_api``, ``scipy``, the rest) and the longest modules, then fails
(exit status 1) when a module is longer than ``LIMIT`` lines and is not in ``ALLOWED``
with a written reason. A guard rail, not a target: a long module is a prompt to split
it by idea; when that is not the right move yet, say why in ``ALLOWED``.

    python tools/line_budget.py [--top N]

Lines are physical lines (``wc -l``), blank lines and docstrings included.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "funcgrad"
LIMIT = 600
LAYERS = ("core", "transforms", "lowering", "numpy_api", "scipy")

# Modules allowed over LIMIT, each with the reason (path relative to the repository root).
ALLOWED: dict[str, str] = {
    "funcgrad/lowering/tapes.py": (
        "the run-time tape lowering (growable buffers, tape loops, zero tapes) is one state "
        "machine; being reworked on another issue-#11 branch, split after that lands"
    ),
    "funcgrad/lowering/linalg.py": (
        "LAPACK calls for every decomposition share one calling-convention and workspace "
        "layer; split per decomposition family when a new one is added"
    ),
    "funcgrad/numpy_api/elementwise.py": (
        "the ufunc family (~100 definitions) shares one set of promotion helpers (_simple, "
        "_out, _to_bool) and tests pin elementwise.__all__; moving comparison/logical/bitwise "
        "to a logic module needs those helpers public first"
    ),
}


def count_lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def layer_of(rel: Path) -> str:
    parts = rel.parts  # ("funcgrad", layer, ...)
    return parts[1] if len(parts) > 2 and parts[1] in LAYERS else "rest"


def measure(package: Path = PACKAGE) -> dict[str, int]:
    """Lines per product module, keyed by path relative to the repository root."""
    return {p.relative_to(package.parent).as_posix(): count_lines(p) for p in sorted(package.rglob("*.py"))}


def report(lines: dict[str, int], top: int) -> list[str]:
    """Print the per-layer totals and the longest modules; return the over-budget
    modules that are not allowed."""
    per_layer = {layer: 0 for layer in (*LAYERS, "rest")}
    for path, n in lines.items():
        per_layer[layer_of(Path(path))] += n
    print(f"product lines per layer ({len(lines)} modules, limit {LIMIT} lines per module):")
    for layer, n in per_layer.items():
        name = f"funcgrad/{layer}" if layer != "rest" else "funcgrad (the rest)"
        print(f"  {name:<24} {n:>6}")
    print(f"  {'total':<24} {sum(per_layer.values()):>6}")
    print(f"longest modules (top {top}):")
    for path, n in sorted(lines.items(), key=lambda kv: -kv[1])[:top]:
        mark = "  (allowed: see ALLOWED)" if n > LIMIT and path in ALLOWED else ""
        print(f"  {n:>6}  {path}{mark}")
    over = [p for p, n in lines.items() if n > LIMIT and p not in ALLOWED]
    stale = [p for p in ALLOWED if lines.get(p, 0) <= LIMIT]
    for p in stale:
        print(f"note: {p} is within the budget now; remove it from ALLOWED in tools/line_budget.py")
    return over


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10, help="how many of the longest modules to list")
    args = parser.parse_args(argv)
    lines = measure()
    over = report(lines, args.top)
    if over:
        for p in over:
            print(f"error: {p} has {lines[p]} lines (limit {LIMIT}): split it by idea, or add it to "
                  "ALLOWED in tools/line_budget.py with the reason it stays whole", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
