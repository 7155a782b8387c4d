"""Op-table rows for funcgrad.ops (segment reductions), against NumPy loops over the
segments. Ids include repeats, an empty segment and out-of-range ids (dropped)."""
import numpy as np

from funcgrad import ops

from harness import rand, randpos, row

IDS = np.array([0, 2, 0, 3, 2, 2, -1, 5], np.int64)  # segment 1 empty; -1 and 5 dropped for 4 segments
FULL = np.array([0, 2, 0, 3, 2, 1, -1, 5], np.int64)  # no empty segment: max/min finite, so differentiable
D1 = rand(8)
D2 = rand(8, 3)
PD = randpos(8)


def _ref(ufunc, identity, num_segments=4):
    def ref(data, ids):
        out = np.full((num_segments,) + data.shape[1:], identity, data.dtype)
        ok = (ids >= 0) & (ids < num_segments)
        ufunc.at(out, ids[ok], data[ok])
        return out
    return ref


ROWS = [
    row("ops.segment_max/empty_segment", lambda d, i: ops.segment_max(d, i, 4), _ref(np.maximum, -np.inf), D2, IDS,
        tags={"no_grad": "an empty segment is -inf: finite differences are undefined (see FULL rows)"}),
    row("ops.segment_sum", lambda d, i: ops.segment_sum(d, i, 4), _ref(np.add, 0), D2, IDS),
    row("ops.segment_sum/int32", lambda d, i: ops.segment_sum(d, i, num_segments=4),
        _ref(np.add, 0), rand(8, dtype=np.int32, low=-5, high=5), IDS.astype(np.int32)),
    row("ops.segment_max", lambda d, i: ops.segment_max(d, i, 4), _ref(np.maximum, -np.inf), D2, FULL),
    row("ops.segment_min", lambda d, i: ops.segment_min(d, i, 4, indices_are_sorted=False), _ref(np.minimum, np.inf),
        D1, FULL),
    row("ops.segment_prod", lambda d, i: ops.segment_prod(d, i, 4), _ref(np.multiply, 1), PD, IDS),
]
