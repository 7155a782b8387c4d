"""Units shared by the programs of a process and found in the disk cache by their key.

A unit (``units.py``) is named by a hash of its canonical text, which follows from its
structure (operations, types, shapes, how it reads and writes its buffers), never from
where it runs. ``share`` takes a program module's units out of it: each unit this
process already compiled is only declared there (bound by name, ``engine.add_symbol``);
each other one is linked from the disk cache (a record per unit, keyed by its name,
naming the object that holds it), and the rest are compiled together, as one library
for the rest of the process, whose object and records are stored. So the layers of a
network, or the forward part of ``jit(f)`` and ``jit(grad(f))``, are compiled once per
process, and a new process finds them on disk even for a program it never saw.

A program record of the disk cache (``program_cache``) names the unit objects its code
calls (an ``engine.provider`` call, replayed before the program's object is linked); a
record whose units are gone is compiled again. A unit that refers to a function or a
global of its program module (a parallel loop's body, ``parallel.py``) stays in the
program.
"""
from __future__ import annotations

import re
import threading

from funcgrad.lowering import disk_cache, engine, program_cache

_PREFIX = "fg_unit_"
# Units stay loaded for the rest of the process (a few kB of code each). A process making
# programs of ever new structures (folded scalar constants are part of a unit's code)
# stops sharing past this many: further units are compiled into their programs and freed
# with them, as before.
MAX_UNITS = 4096
# Only programs making at least this many unit calls share their units (the programs of
# repeated blocks this is for), and only with the disk cache on: a smaller program's units
# are compiled with it, as one module (one LLVM run instead of two), and with the disk
# cache off a cold program is compiled quick first and optimised in the background
# (``tiered``), which units compiled apart would not be.
MIN_CALLS = 32
_DEFINE = re.compile(r"^define internal (\w+) @([\w.$]+)\(([^)]*)\)", re.M)
_GLOBAL_DEF = re.compile(r"^(?:define [^@\n]*@([\w.$]+)\(|@([\w.$]+) = )", re.M)
_REF = re.compile(r"@([\w.$]+)")
_WORD = re.compile(r"[\w.$]+")
_MUTABLE = re.compile(r"@[\w.$]+ = (?:(?:internal|private|common) )?global ")
_lock = threading.Lock()
_kept: list = []  # the units' libraries: loaded for the rest of the process
_bound: dict = {}  # unit name -> (object key or "", that object's declared names, its units)
counts = {"compiled": 0, "loaded": 0, "shared": 0}  # units compiled / linked from disk / found bound


def share(module) -> str:
    """Move ``module``'s shareable units out of it (see the module docstring); return
    their text (what ``llvm_ir_unoptimized`` shows besides the program's own)."""
    stats = getattr(module, "unit_stats", None) or {}
    if stats.get("calls", 0) < MIN_CALLS or not disk_cache.enabled():
        return ""
    units = {n: t for n, t in module.helpers.items() if n.startswith(_PREFIX)}
    if not units:
        return ""
    # (names the program defines: a unit using one stays in it; constants are copied)
    local = {m.group(1) or m.group(2) for part in list(module.helpers.values()) + module.functions
             for m in _GLOBAL_DEF.finditer(part)}
    local |= {n for n, d in module.decls.items() if _MUTABLE.match(d)}
    shared = {n: t for n, t in units.items() if not (set(_REF.findall(t)) - {n}) & local}
    if not shared:
        return ""
    with _lock:
        missing = [n for n in shared if n not in _bound]
        counts["shared"] += len(shared) - len(missing)
        if missing:
            missing = _load(missing)
        if missing and len(_bound) + len(missing) > MAX_UNITS:  # (they stay in their program)
            shared = {n: t for n, t in shared.items() if n in _bound}
        elif missing:
            used = _REF.findall(module.helpers.get("llvm.compiler.used", ""))
            _compile({n: shared[n] for n in missing}, module.decls, used)
        where = {n: _bound[n] for n in shared}
    for n, text in shared.items():
        m = _DEFINE.match(text)
        types = ", ".join(p.split(" ", 1)[0] for p in m.group(3).split(", ")) if m.group(3) else ""
        module.decls[n] = f"declare {m.group(1)} @{n}({types})"
        del module.helpers[n]
    for key in sorted({w[0] for w in where.values()}):  # (recorded for the program record)
        names = sorted(n for n, w in where.items() if w[0] == key)
        require(key, " ".join(names), " ".join(where[names[0]][1]))
    return "\n".join(shared.values())


@engine.provider("units")
def require(key: str, names: str, declared: str) -> None:
    """Bind the units ``names`` (space-separated) from the object stored under ``key``
    (KeyError if it is gone: the program asking is then compiled again)."""
    wanted = names.split()
    with _lock:
        if all(n in _bound for n in wanted):
            return
        if not key:
            raise KeyError("units compiled without the disk cache")
        _link(key, declared.split(), wanted)


def _load(names: list) -> list:
    """Link the objects of the units ``names`` the disk cache has; return the others."""
    fp = engine.fingerprint()
    left = []
    for n in names:
        if n in _bound:
            continue
        r = program_cache.load_library(program_cache.library_key(f"unit {n}", fp))
        units = r.get("units") if r is not None else None
        if not (isinstance(units, list) and n in units and all(isinstance(u, str) for u in units)):
            left.append(n)
            continue
        try:
            _link(r["object"], r["declared"], units)
        except KeyError:
            left.append(n)
    return left


def _link(key: str, declared: list, names: list) -> None:
    handle = engine.load_module(key, declared, names, {}, _no_text, library=True)
    if handle is None or not all(n in handle.addrs for n in names):
        raise KeyError(key)
    _kept.append(handle)
    for n in names:
        engine.add_symbol(n, handle.addrs[n])
        _bound[n] = (key, declared, names)
    counts["loaded"] += len(names)


def _compile(units: dict, decls: dict, used: list) -> None:
    """Compile ``units`` ({name: definition}) as one process-long library and bind them;
    store its object and a record per unit when the disk cache is on. ``decls``: the
    program's declarations; ``used``: its ``@llvm.compiler.used`` names."""
    refs = {r for t in units.values() for r in _REF.findall(t)}
    # (and what those declarations name: a math function's vector variants, which the
    # loop vectoriser calls only if they are declared)
    refs |= {w for name in refs & decls.keys() for w in _WORD.findall(decls[name]) if w in decls}
    parts = ["; units"] + [d for name, d in decls.items() if name in refs]
    used = [f"ptr @{n}" for n in used if n in refs]  # (kept until the vectoriser has run)
    if used:
        parts.append(f"@llvm.compiler.used = appending global [{len(used)} x ptr] [{', '.join(used)}], "
                     'section "llvm.metadata"')
    parts += [t.replace("define internal ", "define ", 1).replace(f"@{n}(", f"@fg_main_{n}(", 1)
              for n, t in units.items()]
    parts += ["attributes #0 = { nounwind }", "attributes #1 = { nounwind willreturn memory(none) }"]
    text = "\n".join(parts) + "\n"
    names = sorted(units)
    handle = engine.compile_module(text, names, library=True)
    _kept.append(handle)
    key = engine.object_key(text, library=True) or ""
    declared = engine.declared_names(text)
    for n in names:
        engine.add_symbol(n, handle.addrs[n])
        _bound[n] = (key, declared, names)
    counts["compiled"] += len(names)
    if key:
        fp = engine.fingerprint()
        for n in names:  # (each record lists the object's units: all bound when it is linked)
            program_cache.store_library(program_cache.library_key(f"unit {n}", fp), key, declared, units=names)


def _no_text() -> str:
    return "; units loaded from the disk cache (their IR: the program emitted again)\n"


def bound() -> int:
    """How many units this process has bound."""
    return len(_bound)
