import atexit
import os
import shutil
import sys
import tempfile

import pytest

# Make the test helpers (harness, op_rows) importable however pytest is invoked.
sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("FUNCGRAD_DEBUG", "1")

# The suite runs the configuration users run: every feature a switch can turn off is on
# (whatever the developer's shell says), the disk cache included. The cache lives in a
# fresh directory per test run, so it never reads or fills the user's own cache, and
# programs compiled by one test are found on disk by the next (as in a user's session);
# subprocesses started by tests inherit it. Tests about a switch set it themselves
# (monkeypatch); tests that count compilations take the ``fresh_disk_cache`` fixture.
for _switch in ("FUNCGRAD_NO_DISK_CACHE", "FUNCGRAD_NO_TIERED_COMPILE", "FUNCGRAD_NO_BLAS"):
    os.environ.pop(_switch, None)
for _setting in ("FUNCGRAD_CACHE_MAX_MB", "FUNCGRAD_NUM_THREADS", "FUNCGRAD_PROMOTION"):
    os.environ.pop(_setting, None)
_CACHE_DIR = tempfile.mkdtemp(prefix="funcgrad-test-cache-")
os.environ["FUNCGRAD_CACHE_DIR"] = _CACHE_DIR
atexit.register(shutil.rmtree, _CACHE_DIR, True)


@pytest.fixture
def fresh_disk_cache(tmp_path, monkeypatch):
    """An empty disk cache of this test's own, for tests that count compilations or
    stores (the run's shared cache may already hold their programs)."""
    monkeypatch.setenv("FUNCGRAD_CACHE_DIR", str(tmp_path / "funcgrad-cache"))
    return tmp_path / "funcgrad-cache"
