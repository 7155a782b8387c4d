"""Find the user's source line (the first frame outside funcgrad) for error messages."""
from __future__ import annotations

import linecache
import os
import sys
import traceback

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_frame(skip_internal: bool = True) -> traceback.FrameSummary | None:
    """The innermost stack frame whose file is not inside the funcgrad package."""
    f = sys._getframe(1)
    while f is not None:
        fname = f.f_code.co_filename
        if not (skip_internal and fname.startswith(_PKG_DIR)) and not fname.startswith("<frozen"):
            line = linecache.getline(fname, f.f_lineno).strip()
            return traceback.FrameSummary(fname, f.f_lineno, f.f_code.co_name, line=line or None)
        f = f.f_back
    return None


def describe(frame: traceback.FrameSummary | None) -> str:
    if frame is None:
        return "(source line unknown)"
    text = f'File "{frame.filename}", line {frame.lineno}, in {frame.name}'
    if frame.line:
        text += f"\n    {frame.line}"
    return text
