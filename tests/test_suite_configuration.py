"""The suite runs the configuration users run: every switchable feature on, the disk
cache included, in a directory of the test run's own (never the user's cache)."""
import os
import subprocess
import sys

from funcgrad import config
from funcgrad.lowering import disk_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_disk_cache_is_on_in_a_directory_of_the_runs_own():
    assert disk_cache.enabled()
    d = disk_cache.directory()
    assert d != config.default_cache_dir()
    assert os.path.basename(d).startswith("funcgrad-test-cache-")


def test_no_switch_turns_a_default_off():
    assert not [name for name in config.SWITCHES if name.startswith("FUNCGRAD_NO_") and config.flag(name)]


def test_the_runs_cache_dir_is_removed_afterwards(tmp_path):
    # A pytest run of its own, with a developer's switches set: the suite turns them off,
    # uses a fresh cache directory, and removes it at the end.
    probe = tmp_path / "test_probe.py"
    probe.write_text("import os\n"
                     "def test_probe():\n"
                     "    print('DIR', os.environ['FUNCGRAD_CACHE_DIR'])\n"
                     "    assert 'FUNCGRAD_NO_DISK_CACHE' not in os.environ\n")
    conftest = os.path.join(ROOT, "tests", "conftest.py")
    (tmp_path / "conftest.py").write_text(open(conftest).read())
    env = dict(os.environ, FUNCGRAD_NO_DISK_CACHE="1", FUNCGRAD_CACHE_DIR=str(tmp_path / "users-cache"))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", str(probe)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    run_dir = next(line.split()[1] for line in out.stdout.splitlines() if line.startswith("DIR"))
    assert run_dir != str(tmp_path / "users-cache")
    assert not os.path.exists(run_dir)
    assert not (tmp_path / "users-cache").exists()
