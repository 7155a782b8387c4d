"""``python -m funcgrad.demo`` (the README's first command) runs to the end."""
import subprocess
import sys


def test_demo_runs():
    proc = subprocess.run([sys.executable, "-m", "funcgrad.demo"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for section in range(1, 9):
        assert f"\n{section}. " in "\n" + proc.stdout, f"section {section} missing:\n{proc.stdout}"
    assert "steady state (median of 7)" in proc.stdout
    assert "TracerBoolConversionError" in proc.stdout
