"""Open an export blob, edit its program, seal it again: what an attacker can do.

The blob's framing (``funcgrad/export/wire.py``) is a checksum, not a signature: anyone
can recompute it. So tests of the loader edit the JSON header (grammar in
``funcgrad/export/codec.py``) and reseal it; whatever the loader accepts must then be
safe to compile and run.

>>> ed = BlobEditor(blob)
>>> body = ed.jaxpr(ed.eqns("while")[0][3]["body_jaxpr"]["j"])
>>> body["in"][0] = ["float64", [8], 0]
>>> fg.deserialize(ed.seal())          # ExportError naming the while body
"""
from __future__ import annotations

import copy
import json
import struct

from funcgrad.export import wire


def aval(dtype: str, shape, weak: int = 0) -> list:
    """An aval in the header's form: ``["float64", [4], 0]``."""
    return [dtype, list(shape), weak]


def ints(values) -> dict:
    """A tuple-of-ints param in the header's form."""
    return {"t": list(values)}


class BlobEditor:
    """The header (a JSON tree, edited in place) and data section of one blob."""

    def __init__(self, blob: bytes):
        header, data = wire.unseal(blob)
        self.header = copy.deepcopy(header)
        self.data = bytes(data)

    @property
    def record(self) -> dict:
        """The first export record (the function; the next ones are its VJP programs)."""
        return self.header["exports"][0]

    def jaxpr(self, index: int | None = None, record: int = 0) -> dict:
        """The jaxpr table entry ``index`` (the program's root by default)."""
        rec = self.header["exports"][record]
        return rec["jaxprs"][rec["root"] if index is None else index]

    def eqns(self, prim: str | None = None, record: int = 0):
        """Every equation (of every jaxpr of the record) whose primitive is ``prim``."""
        return [e for j in self.header["exports"][record]["jaxprs"] for e in j["eqns"]
                if prim is None or e[0] == prim]

    def add_value(self, raw: bytes) -> list:
        """Append raw bytes to the data section; their [offset, nbytes] reference."""
        pad = -len(self.data) % 8
        self.data += b"\x00" * pad
        ref = [len(self.data), len(raw)]
        self.data += raw
        return ref

    def seal(self, version: int = wire.FORMAT_VERSION) -> bytes:
        """The edited blob, with a valid length prefix and SHA-256."""
        sealed = bytearray(wire.seal(self.header, self.data))
        struct.pack_into("<I", sealed, 16, version)
        return bytes(sealed)

    def dumps(self) -> str:
        return json.dumps(self.header, indent=1)
