"""The layers of DESIGN §2, checked by reading every module's imports (``ast``, including
imports inside functions): arrows point one way.

- ``funcgrad/core`` imports nothing from transforms, lowering, numpy_api or the run-time
  tapes, and no llvmlite; and it knows no tapes (no identifier mentions one).
- ``funcgrad/lowering`` imports nothing from transforms or numpy_api (only core, the tape
  declarations, errors, numpy and llvmlite).
- ``funcgrad/tapes.py`` (a peer of core) imports only core.
- No module imports another module's private (``_x``) names; a private *module* of a
  package (``numpy_api._util``) is that package's business.
- Lowering dispatches on primitives and their properties, never on names.
"""
import ast
import io
import pathlib
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = ROOT / "funcgrad"

# (importing module, imported name) -> why it is allowed anyway.
PRIVATE_IMPORT_ALLOWED = {
    ("funcgrad.lowering.indexing", "_max_min"):
        "lowering-internal emitter shared between two mirror files (not part of the cflow layering work)",
    ("funcgrad.lowering.special", "_Fn"):
        "lowering-internal: special functions reuse vecmath's scalar arithmetic emitters",
    ("funcgrad.numpy_api.elementwise", "_uniform_dtype"):
        "numpy_api-internal: a helper of the package's own private _util module",
    ("funcgrad.transforms.eager_vjp", "_eager_bind"):
        "the eager tape calls trace's NumPy dispatch directly on its hot path (owned by the reverse-mode walker work)",
}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules():
    return sorted(PKG.rglob("*.py"))


def _imports(path: pathlib.Path):
    """[(imported module, imported name or None, line)] of every import in the file."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing package
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found += [(base, a.name, node.lineno) for a in node.names]
    return found


def _is_submodule(module: str, name: str) -> bool:
    path = ROOT.joinpath(*module.split("."), name)
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _targets(module: str, name):
    """The modules an import may load: ``from a.b import c`` loads a.b and maybe a.b.c."""
    return [module] + ([f"{module}.{name}"] if name else [])


def _under(target: str, prefix: str) -> bool:
    return target == prefix or target.startswith(prefix + ".")


def _violations(files, forbidden):
    bad = []
    for path in files:
        for module, name, line in _imports(path):
            for target in _targets(module, name):
                if any(_under(target, f) for f in forbidden):
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    return sorted(set(bad))


def test_core_imports_nothing_above_it():
    files = sorted((PKG / "core").rglob("*.py"))
    assert files
    forbidden = ["funcgrad.transforms", "funcgrad.lowering", "funcgrad.numpy_api", "funcgrad.numpy", "funcgrad.tapes",
                 "llvmlite"]
    assert _violations(files, forbidden) == []


def test_lowering_imports_no_transforms():
    files = sorted((PKG / "lowering").rglob("*.py"))
    assert files
    assert _violations(files, ["funcgrad.transforms", "funcgrad.numpy_api", "funcgrad.numpy"]) == []


def test_tapes_module_imports_only_core():
    files = [PKG / "tapes.py"]
    forbidden = ["funcgrad.transforms", "funcgrad.lowering", "funcgrad.numpy_api", "funcgrad.numpy", "llvmlite"]
    assert _violations(files, forbidden) == []
    others = {m for m, _, _ in _imports(files[0]) if m.startswith("funcgrad")}
    assert all(_under(m, "funcgrad.core") for m in others), others


def test_no_module_imports_private_names_of_another():
    bad = []
    for path in _modules():
        importer = _module_name(path)
        for module, name, line in _imports(path):
            if not name or not name.startswith("_") or name.startswith("__"):
                continue
            if not _under(module, "funcgrad"):  # other libraries' internals are their business
                continue
            if _is_submodule(module, name) or (importer, name) in PRIVATE_IMPORT_ALLOWED:
                continue
            bad.append(f"{path.relative_to(ROOT)}:{line}: from {module} import {name}")
    assert bad == [], "make these public functions of the module that owns them:\n" + "\n".join(bad)


def test_private_import_allow_list_is_current():
    used = {(_module_name(p), n) for p in _modules() for _, n, _ in _imports(p) if n}
    stale = [k for k in PRIVATE_IMPORT_ALLOWED if k not in used]
    assert stale == [], f"remove stale allow-list entries: {stale}"


def _identifiers(path: pathlib.Path):
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
    return [(t.string, t.start[0]) for t in tokens if t.type == tokenize.NAME]


def test_core_knows_no_tapes():
    # Comments may say "tape" in passing; no code (identifier) names one.
    bad = [f"{p.relative_to(ROOT)}:{line}: {name}" for p in sorted((PKG / "core").rglob("*.py"))
           for name, line in _identifiers(p) if "tape" in name.lower()]
    assert bad == []


def _name_comparisons(path: pathlib.Path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left] + list(node.comparators)
            if any(isinstance(o, ast.Attribute) and o.attr == "name" for o in operands):
                yield node.lineno


@pytest.mark.parametrize("layer", ["lowering", "transforms/control_flow"])
def test_no_dispatch_on_primitive_names(layer):
    bad = [f"{p.relative_to(ROOT)}:{line}" for p in sorted((PKG / layer).rglob("*.py")) for line in _name_comparisons(p)]
    assert bad == [], "dispatch on the primitive (or a property of it), not on its name"
