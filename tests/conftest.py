import os
import sys

# Make the test helpers (harness, op_rows) importable however pytest is invoked.
sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("FUNCGRAD_DEBUG", "1")
# Tests compile from scratch (some replace the optimiser to check its failure paths) and
# leave the user's cache alone; tests/test_disk_cache.py turns the cache on in a tmp dir.
os.environ.setdefault("FUNCGRAD_NO_DISK_CACHE", "1")
