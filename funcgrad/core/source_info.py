"""Find the user's source line (the first frame outside funcgrad) for error messages."""
from __future__ import annotations

import linecache
import os
import sys

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class SourceLine:
    """Where an equation came from: ``filename``, ``lineno``, ``name`` (the function) and
    ``line`` (its source text, read only when an error message asks for it: staging
    records one of these per equation, so it must be cheap). Shared: every equation
    staged from the same point of the same code object gets the same object."""

    __slots__ = ("filename", "lineno", "name", "_code")

    def __init__(self, filename: str, lineno: int, name: str, code=None):
        self.filename, self.lineno, self.name = filename, lineno, name
        self._code = code  # (keeps the code object alive: ``_lines`` is keyed by its id)

    @property
    def line(self) -> str | None:
        return linecache.getline(self.filename, self.lineno).strip() or None

    def __repr__(self):
        return f"<SourceLine {self.filename}:{self.lineno} in {self.name}>"


# (id(code object), instruction offset) -> its SourceLine. A frame's ``f_lineno`` decodes the
# code's line table from the start on every read, and a new SourceLine per equation costs an
# allocation; a user's line stages many equations (every operator of ``x * 2.0 + y``, every
# step of a Python loop), so both are done once per call site. Keyed by the code's id, not
# the code (a code object hashes its constants tuple each time); the SourceLine holds the code,
# so the id cannot be reused while the entry exists. Bounded: cleared when full.
_lines: dict = {}
_LINES_MAX = 8192
# id(code object) -> the code, for funcgrad's own (and frozen) code objects: the walk skips
# them with one lookup instead of two string tests per frame (an op from funcgrad.numpy
# passes about five of them). The value keeps the code alive, so its id is not reused.
_internal: dict = {}
# While a staged equation is bound again (``transforms/ad_prune.py`` linearizes a staged
# primal program), the line it was staged from: what the stack walk found the first time.
staged_from: SourceLine | None = None
# (id(code), offset) -> SourceLine for ``user_frame(False)`` (whose entries may be funcgrad's
# own lines: ``_lines`` holds user lines only, so a hit there needs no file-name test).
_lines_any: dict = {}
# ``[frame, result]`` while the reverse-mode walker runs (``anchored``): a funcgrad frame the
# walk from which cannot change while it runs (its callers are suspended), so the walks of
# the equations its transpose rules stage stop there; the result is found by the first.
anchor: list | None = None
_UNSET = object()


def anchored(frame) -> list | None:
    """Anchor the walk at ``frame`` (a funcgrad frame); returns the previous anchor, which
    the caller restores (``source_info.anchor = previous``) when the frame returns."""
    global anchor
    previous = anchor
    anchor = [frame, _UNSET]
    return previous


def user_frame(skip_internal: bool = True, skip: int = 0) -> SourceLine | None:
    """The innermost stack frame whose file is not inside the funcgrad package.

    ``skip``: how many frames above the caller's are known to be funcgrad's (staging
    passes its own and ``bind``'s): the walk starts above them. Staging asks once per
    equation: the walk reads only each frame's code object and file name."""
    if staged_from is not None:
        return staged_from
    f = sys._getframe(1 + skip)
    pkg = _PKG_DIR
    if skip_internal:
        internal, lines = _internal, _lines
        held = anchor
        stop = held[0] if held is not None else None
    else:
        internal, lines, held, stop = {}, _lines_any, None, None
    memo = None
    while f is not None:
        code = f.f_code
        cid = id(code)
        if cid in internal:
            if f is stop:
                found = held[1]
                if found is not _UNSET:
                    return found
                memo = held  # the first walk through the anchor: keep what it finds
            f = f.f_back
            continue
        key = (cid, f.f_lasti)
        found = lines.get(key)
        if found is None:
            fname = code.co_filename
            if (skip_internal and fname.startswith(pkg)) or fname.startswith("<frozen"):
                if skip_internal:
                    if len(_internal) >= _LINES_MAX:
                        _internal.clear()
                    _internal[cid] = code
                f = f.f_back
                continue
            if len(lines) >= _LINES_MAX:
                lines.clear()
            found = lines[key] = SourceLine(fname, f.f_lineno, code.co_name, code)
        if memo is not None:
            memo[1] = found
        return found
    if memo is not None:
        memo[1] = None
    return None


def describe(frame: SourceLine | None) -> str:
    if frame is None:
        return "(source line unknown)"
    text = f'File "{frame.filename}", line {frame.lineno}, in {frame.name}'
    line = frame.line
    if line:
        text += f"\n    {line}"
    return text
