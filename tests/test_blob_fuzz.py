"""CI slice of the blob fuzzer (``tests/fuzz/blobs.py``): 100 mutated, resealed export
blobs, each loaded and called in a worker process. Each must be rejected with an
ExportError or run with the evaluator's result: no crash, hang, internal error or
garbage. The long run: ``python -m tests.fuzz.blobs --cases 0:2000``."""
import collections

from fuzz.blobs import FAILED, run_cases


def test_mutated_blobs_are_rejected_or_run_correctly():
    counts, failures = collections.Counter(), []
    for res in run_cases(range(100), timeout=120.0):
        counts[res["status"]] += 1
        if res["status"] in FAILED:
            failures.append(res)
    assert not failures, failures[:5]
    # the slice exercises both sides of the checker
    assert counts["rejected"] >= 30 and counts["accepted_ok"] >= 10, counts
