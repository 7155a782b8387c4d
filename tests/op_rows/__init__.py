"""Op-table rows, one module per family; each defines ``ROWS: list[OpRow]``."""
import importlib
import pkgutil


def all_rows():
    import numpy as np

    import harness

    rows = []
    for i, info in enumerate(sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name)):
        # Each module draws its samples from its own seed, so adding rows to one module
        # never changes another module's inputs.
        harness._rng = np.random.default_rng(1000 + sum(map(ord, info.name)))
        mod = importlib.import_module(f"{__name__}.{info.name}")
        rows.extend(getattr(mod, "ROWS", []))
    names = [r.name for r in rows]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ValueError(f"duplicate op-row names: {sorted(dupes)}")
    return rows
