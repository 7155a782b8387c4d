"""The container of an exported blob: magic, version, lengths, checksum, a JSON header
and a data section of raw array bytes (the layout is in ``funcgrad/export/__init__.py``).

Reading never trusts the blob: every length is checked against the bytes present
before anything is sliced, the checksum before the header is parsed, and the header is
JSON (``json.loads`` builds only dicts, lists, strings and numbers: nothing in a blob
names a Python object to import or call). Any failure is an ``ExportError``.
"""
from __future__ import annotations

import hashlib
import json
import struct

from funcgrad.errors import ExportError

MAGIC = b"FUNCGRAD-EXPORT\x00"  # 16 bytes
FORMAT_VERSION = 1
# Versions this reader understands (a newer writer bumps FORMAT_VERSION when the header
# schema changes meaning; readers refuse what they do not know rather than guess).
SUPPORTED_VERSIONS = (1,)
_FIXED = struct.Struct("<16sIIQQ32s")  # magic, version, flags, header bytes, data bytes, sha256
PREFIX_BYTES = _FIXED.size  # 72
_MAX_HEADER = 1 << 30  # a header beyond 1 GiB is not one funcgrad wrote


class DataWriter:
    """Collects raw array bytes for the data section; each buffer starts 8-aligned."""

    def __init__(self):
        self.chunks: list[bytes] = []
        self.size = 0

    def add(self, raw: bytes) -> list:
        pad = -self.size % 8
        if pad:
            self.chunks.append(b"\x00" * pad)
            self.size += pad
        ref = [self.size, len(raw)]
        self.chunks.append(raw)
        self.size += len(raw)
        return ref

    def getvalue(self) -> bytes:
        return b"".join(self.chunks)


def seal(header: dict, data: bytes) -> bytes:
    """The blob: fixed prefix, then the header (compact JSON), then ``data``."""
    head = json.dumps(header, separators=(",", ":"), sort_keys=True, allow_nan=False).encode()
    digest = hashlib.sha256(head + data).digest()
    return _FIXED.pack(MAGIC, FORMAT_VERSION, 0, len(head), len(data), digest) + head + data


def unseal(blob) -> tuple[dict, memoryview]:
    """(header, data section) of a blob, or ``ExportError`` saying what is wrong."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"funcgrad.export.deserialize: expected bytes, got {type(blob).__name__}")
    view = memoryview(blob).cast("B")
    if len(view) < PREFIX_BYTES or bytes(view[:16]) != MAGIC:
        raise ExportError(
            f"funcgrad.export.deserialize: not a funcgrad export blob ({len(view)} bytes; it does not start "
            f"with the magic {MAGIC!r})")
    _, version, flags, n_head, n_data, digest = _FIXED.unpack(bytes(view[:PREFIX_BYTES]))
    if version not in SUPPORTED_VERSIONS:
        raise ExportError(
            f"funcgrad.export.deserialize: format version {version} is not supported by this funcgrad "
            f"(it reads versions {list(SUPPORTED_VERSIONS)}); export the function again with this version")
    if flags != 0 or n_head > _MAX_HEADER or PREFIX_BYTES + n_head + n_data != len(view):
        raise ExportError(
            f"funcgrad.export.deserialize: truncated or damaged blob: {len(view)} bytes, but its prefix declares "
            f"{PREFIX_BYTES} + {n_head} (header) + {n_data} (data)")
    body = view[PREFIX_BYTES:]
    if hashlib.sha256(body).digest() != digest:
        raise ExportError("funcgrad.export.deserialize: checksum mismatch: the blob was modified or damaged")
    try:
        header = json.loads(bytes(body[:n_head]).decode("utf-8"))
    except (ValueError, RecursionError) as e:  # (UnicodeDecodeError is a ValueError)
        raise ExportError(f"funcgrad.export.deserialize: the header is not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise ExportError("funcgrad.export.deserialize: the header is not a JSON object")
    return header, body[n_head:]
