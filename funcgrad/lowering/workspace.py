"""The workspace of a compiled function: where its intermediate buffers lie (``pack_buffers``),
and the IR keeping a large heap workspace between calls (``give_back_workspace``,
``RELEASE_WORKSPACE``)."""
from __future__ import annotations

import bisect
import heapq


def pack_buffers(intervals, align: int) -> tuple[dict, int]:
    """Give each interval ``(start, end, vid, size)`` (by increasing start) the lowest
    ``align``-aligned offset where it overlaps no buffer live at ``start`` (first fit). The
    free space below the highest live buffer is a sorted list of gaps, so a placement
    costs the number of gaps, not of live buffers (a gradient keeps its forward values
    live: thousands of them). Returns ({vid: offset}, bytes spanned)."""
    offsets: dict = {}
    nbytes = 0
    gaps: list = []  # free (lo, hi) below ``top``, sorted, none adjacent to another
    top = 0
    expiring: list = []  # heap of (end, offset, aligned size)
    for start, end, vid, size in intervals:
        while expiring and expiring[0][0] < start:
            _, lo, asize = heapq.heappop(expiring)
            hi = lo + asize
            k = bisect.bisect(gaps, (lo,))
            if k and gaps[k - 1][1] == lo:
                k -= 1
                lo = gaps.pop(k)[0]
            if k < len(gaps) and gaps[k][0] == hi:
                hi = gaps.pop(k)[1]
            if hi == top:
                top = lo
            else:
                gaps.insert(k, (lo, hi))
        if size == 0:  # (an empty array: no bytes to place)
            offsets[vid] = 0
            continue
        asize = (size + align - 1) // align * align
        for k, (lo, hi) in enumerate(gaps):
            if hi - lo >= size:  # (then hi >= lo + asize: gaps are aligned)
                off = lo
                if lo + asize < hi:
                    gaps[k] = (lo + asize, hi)
                else:
                    del gaps[k]
                break
        else:
            off = top
            top += asize
        heapq.heappush(expiring, (end, off, asize))
        offsets[vid] = off
        nbytes = max(nbytes, off + size)
    return offsets, nbytes


def give_back_workspace(b, tag: str) -> str:
    """IR that returns the workspace to the module's slot, or frees it if the slot was
    refilled meanwhile (by a concurrent call)."""
    t = tag.rstrip(":").replace("fg_fail_", "")
    return (f"%wsx_{t} = cmpxchg ptr @fg_main_ws_cache, ptr null, ptr %ws acq_rel monotonic\n"
            f"  %wsok_{t} = extractvalue {{ ptr, i1 }} %wsx_{t}, 1\n"
            f"  br i1 %wsok_{t}, label %wskept_{t}, label %wsfree_{t}\n"
            f"wsfree_{t}:\n  call void @free(ptr %ws)\n  br label %wskept_{t}\n"
            f"wskept_{t}:")


# Exported by modules with a cached workspace: frees it before the module is unloaded.
RELEASE_WORKSPACE = """define void @fg_main_release() nounwind {
entry:
  %p = atomicrmw xchg ptr @fg_main_ws_cache, ptr null acq_rel
  call void @free(ptr %p)
  ret void
}"""
