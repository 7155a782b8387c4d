"""Every script in examples/ runs to the end in its quick mode (small sizes), as a user
would run it: a fresh process, the repository's funcgrad, funcgrad's defaults. Each
script checks its own numbers (against a loop, finite differences or a closed form)."""
import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")) if EXAMPLES.exists() else []


def test_there_are_examples():
    if not EXAMPLES.exists():
        pytest.skip("examples/ not next to the package (installed copy)")
    assert len(SCRIPTS) >= 8, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs_in_quick_mode(script, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    root = str(EXAMPLES.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), "--quick"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), f"{script} printed nothing"
