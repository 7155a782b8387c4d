import os
import sys

# Make the test helpers (harness, op_rows) importable however pytest is invoked.
sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("FUNCGRAD_DEBUG", "1")
