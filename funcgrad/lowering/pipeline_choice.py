"""Which LLVM pipeline a module gets: the full one (O2 with the vectorisers) or the
loop-free one (O1, fast instruction selection), decided from the IR text alone."""
from __future__ import annotations

import re

# A program module without loops runs each of its instructions at most once per call, so its
# run time is bounded by its size (plus the calls it makes into BLAS or the math libraries,
# compiled on their own): it gets O1 without vectorisers and LLVM's fast instruction
# selector, about half the compile time of the full pipeline for the same machine code
# size. Libraries (``compile_ir``: their functions run inside other modules' loops) and
# any module with a loop get the full pipeline.
_LABEL_DEF = re.compile(r'^(?:"([^"]+)"|([-\w.$]+)):', re.M)
_LABEL_REF = re.compile(r'label %(?:"([^"]+)"|([-\w.$]+))')
_FUNCTION = re.compile(r"^define ", re.M)


def has_loops(text: str) -> bool:
    """Whether some function in ``text`` (LLVM IR) may loop: it has a branch to a block at
    or before the branching block. Every cycle in a control-flow graph has such an edge,
    so False means no loops; True may be a false alarm (an acyclic function laid out with
    a backward edge) or a branch target this cannot find: both get the full pipeline,
    which is always safe."""
    for fn in _FUNCTION.split(text)[1:]:
        defs = {m.group(1) or m.group(2): m.start() for m in _LABEL_DEF.finditer(fn)}
        for m in _LABEL_REF.finditer(fn):
            at = defs.get(m.group(1) or m.group(2))
            if at is None or at < m.start():
                return True
    return False


def pipeline(text: str, library: bool = False) -> str:
    """``"full"`` or ``"loop-free"``: the pipeline ``text`` is compiled with."""
    return "full" if library or has_loops(text) else "loop-free"
