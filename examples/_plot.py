"""What every example shares: ``--quick`` (small sizes, as CI runs them) and saving a
picture when matplotlib is installed (``pip install 'funcgrad[examples]'``)."""
from __future__ import annotations

import os
import sys

QUICK = "--quick" in sys.argv
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")


def figure():
    """A matplotlib figure and axes, or (None, None) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None, None
    return plt.subplots(figsize=(6, 4), dpi=100)


def save(fig, name: str) -> None:
    """Save ``fig`` as ``examples/out/<name>.png`` (nothing without matplotlib)."""
    if fig is None:
        print("(matplotlib is not installed: no picture)")
        return
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name + ".png")
    fig.tight_layout()
    fig.savefig(path)
    print("picture:", os.path.relpath(path))
