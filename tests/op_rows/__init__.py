"""Op-table rows, one module per family; each defines ``ROWS: list[OpRow]``."""
import importlib
import pkgutil


def all_rows():
    rows = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        rows.extend(getattr(mod, "ROWS", []))
    names = [r.name for r in rows]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ValueError(f"duplicate op-row names: {sorted(dupes)}")
    return rows
