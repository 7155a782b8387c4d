"""How much of JAX's public surface funcgrad has, row by row.

For each row (``numpy``, ``lax``, ``nn``, ``random``, ``scipy.special``, ...) it lists JAX
0.10.2's public names (``dir(module)`` without leading underscores, submodules included;
``lax`` without the ``*_p`` primitive handles; the top level without the multi-device
names) and looks each one up at the same path under ``funcgrad`` (``jax`` -> ``funcgrad``).
Names funcgrad leaves out on purpose are listed, with the reason, in one place,
``funcgrad/_omitted.py``; they are reported apart from the missing ones.

    /work/jaxenv/bin/python tools/jax_names.py            # the table, reading JAX
    /work/jaxenv/bin/python tools/jax_names.py --snapshot # also rewrite tools/jax_names.json
    python tools/jax_names.py                             # the table from tools/jax_names.json
    python tools/jax_names.py --missing                   # the missing names, one per line
    python tools/jax_names.py --docs                      # rewrite docs/reference/jax-differences.md
    python tools/jax_names.py --check                     # exit 1 if that page is stale

Run it from the repository root (or with ``PYTHONPATH`` naming it) so that the funcgrad it
imports is this checkout's. It reads JAX when JAX is importable and the snapshot otherwise.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = Path(__file__).resolve().parent / "jax_names.json"
DOCS = ROOT / "docs" / "reference" / "jax-differences.md"
JAX_VERSION = "0.10.2"

# row name -> the JAX modules whose names it counts (a module's submodules are walked when
# the second item is True: their names count as "sub.name").
ROWS: dict[str, list[tuple[str, bool]]] = {
    "numpy": [("jax.numpy", False)],
    "lax": [("jax.lax", False)],
    "nn": [("jax.nn", False)],
    "random": [("jax.random", False)],
    "scipy.special": [("jax.scipy.special", False)],
    "scipy.stats": [("jax.scipy.stats", True)],
    "scipy.linalg": [("jax.scipy.linalg", False)],
    "scipy.signal": [("jax.scipy.signal", False)],
    "scipy.interpolate+spatial": [("jax.scipy.interpolate", False), ("jax.scipy.spatial.transform", False)],
    "tree_util+tree": [("jax.tree_util", False), ("jax.tree", False)],
    "top level": [("jax", False)],
}

# The top level's multi-device names: meshes, shardings, per-device maps and multi-process
# arrays (funcgrad runs in one process on one CPU device). They are not counted.
MULTI_DEVICE = frozenset({
    "pmap", "shard_map", "smap", "sharding", "NamedSharding", "P", "Shard", "make_mesh", "set_mesh",
    "reshard", "remove_size_one_mesh_axis_from_type", "make_array_from_callback",
    "make_array_from_process_local_data", "make_array_from_single_device_arrays", "distributed",
    "auto_pcast",
})


def _public(module) -> list[str]:
    return sorted(n for n in dir(module) if not n.startswith("_"))


def _row_names(row: str) -> list[str]:
    """The JAX names of ``row`` (imports JAX), qualified by module when a row has several."""
    names: list[str] = []
    sources = ROWS[row]
    for path, walk in sources:
        module = importlib.import_module(path)
        prefix = "" if len(sources) == 1 else path.rpartition(".")[2] + "."
        if path == "jax.scipy.spatial.transform":
            prefix = "spatial.transform."
        for name in _public(module):
            if row == "lax" and name.endswith("_p"):
                continue
            if row == "top level" and name in MULTI_DEVICE:
                continue
            names.append(prefix + name)
            value = getattr(module, name)
            if walk and isinstance(value, types.ModuleType):
                names += [f"{prefix}{name}.{sub}" for sub in _public(value)
                          if not isinstance(getattr(value, sub), types.ModuleType)]
    return sorted(names)


def jax_names() -> dict[str, list[str]]:
    """{row: JAX's names}: from JAX when it imports, else from the committed snapshot."""
    try:
        import jax
    except ImportError:
        data = json.loads(SNAPSHOT.read_text())
        return data["rows"]
    if jax.__version__ != JAX_VERSION:
        print(f"note: JAX {jax.__version__} installed, the snapshot is of {JAX_VERSION}", file=sys.stderr)
    return {row: _row_names(row) for row in ROWS}


def _funcgrad_module(jax_path: str):
    try:
        return importlib.import_module("funcgrad" + jax_path[3:])
    except ImportError:
        return None


def _has(row: str, qualified: str) -> bool:
    """Whether funcgrad has the JAX name ``qualified`` of ``row`` at the same path."""
    sources = ROWS[row]
    path = sources[0][0]
    parts = qualified.split(".")
    if len(sources) > 1:
        head = parts.pop(0)
        if head == "spatial":
            parts.pop(0)
            head = "transform"
        path = next(p for p, _ in sources if p.endswith("." + head))
    obj = _funcgrad_module(path)
    if obj is None:
        return False
    for part in parts:  # a name may be bound to None (numpy.newaxis)
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def omitted() -> dict[str, dict[str, str]]:
    """The names left out on purpose (none for a checkout older than the list)."""
    sys.path.insert(0, str(ROOT))
    try:
        from funcgrad._omitted import OMITTED
    except ImportError:
        return {}
    return OMITTED


def table(rows: dict[str, list[str]]):
    """[(row, jax count, funcgrad count, omitted names, missing names)]."""
    left_out = omitted()
    out = []
    for row, names in rows.items():
        present = [n for n in names if _has(row, n)]
        skip = left_out.get(row, {})
        missing = [n for n in names if n not in present and n not in skip]
        out.append((row, len(names), len(present), sorted(set(skip) & set(names)), missing))
    return out


def render_table(result, show_missing=True) -> str:
    lines = [f"{'row':28} {'JAX':>5} {'funcgrad':>8} {'%':>6} {'omitted':>7} {'missing':>7} {'% with omitted':>14}"]
    total_j = total_f = total_o = 0
    for row, n_jax, n_fg, left, missing in result:
        total_j, total_f, total_o = total_j + n_jax, total_f + n_fg, total_o + len(left)
        lines.append(f"{row:28} {n_jax:5d} {n_fg:8d} {100 * n_fg / n_jax:5.1f}% {len(left):7d} {len(missing):7d} "
                     f"{100 * (n_fg + len(left)) / n_jax:13.1f}%")
    lines.append(f"{'total':28} {total_j:5d} {total_f:8d} {100 * total_f / total_j:5.1f}% {total_o:7d} "
                 f"{total_j - total_f - total_o:7d} {100 * (total_f + total_o) / total_j:13.1f}%")
    if show_missing:
        for row, _, _, _, missing in result:
            if missing:
                lines.append(f"\nmissing in {row}: " + " ".join(missing))
    return "\n".join(lines)


def render_docs() -> str:
    """The page docs/reference/jax-differences.md, from ``funcgrad._omitted``."""
    from funcgrad._omitted import NARROW_FLOATS, OMITTED

    lines = [
        "# JAX names funcgrad leaves out",
        "",
        "<!-- generated by `python tools/jax_names.py --docs` from funcgrad/_omitted.py; do not edit by hand -->",
        "",
        f"funcgrad mirrors JAX {JAX_VERSION}'s public names module by module (`jax.numpy` -> `funcgrad.numpy`,",
        "`jax.lax` -> `funcgrad.lax`, ...). `python tools/jax_names.py` counts, per module, JAX's names and",
        "funcgrad's. The names below are left out on purpose; each has its reason. Multi-device names",
        "(`pmap`, `shard_map`, meshes and shardings) are not counted at all: funcgrad runs on one CPU device.",
        "",
        "## Narrow float types",
        "",
        NARROW_FLOATS,
    ]
    for row, names in OMITTED.items():
        lines += ["", f"## {row}", "", "| name | why it is left out |", "|---|---|"]
        lines += [f"| `{name}` | {reason} |" for name, reason in sorted(names.items())]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshot", action="store_true", help="rewrite tools/jax_names.json from JAX")
    parser.add_argument("--missing", action="store_true", help="print only the missing names")
    parser.add_argument("--docs", action="store_true", help="rewrite docs/reference/jax-differences.md")
    parser.add_argument("--check", action="store_true", help="exit 1 if the docs page is stale")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.docs or args.check:
        text = render_docs()
        if args.check:
            stale = not DOCS.exists() or DOCS.read_text() != text
            if stale:
                print(f"{DOCS.relative_to(ROOT)} is stale: run python tools/jax_names.py --docs")
            return int(stale)
        DOCS.write_text(text)
        return 0
    rows = jax_names()
    if args.snapshot:
        SNAPSHOT.write_text(json.dumps({"jax": JAX_VERSION, "rows": rows}, indent=1) + "\n")
    result = table(rows)
    if args.missing:
        for row, _, _, _, missing in result:
            for name in missing:
                print(f"{row}: {name}")
        return 0
    print(render_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
