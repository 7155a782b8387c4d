"""Tables of unit calls: a run of calls to units (``units.py``) as data, not code.

A program of thousands of loop nests makes thousands of calls to a few dozen units. As
call instructions, that is most of the program's IR (each call passes each buffer as a
base pointer and an offset) and most of LLVM's time on it (about 0.7 s of 0.8 for 4800
calls, even in chunks of 64). Here a run of calls is a segment of one constant array of
integers, ``@fg_unit_calls``: per call, the unit's number and one integer per parameter
of the unit (for a pointer, the number of its base in the core function's array of bases
``%fg_bases``: the workspace, the arguments, the constants; for an offset, the offset).
The core function calls ``@fg_run_units(bases, table, units, first, end)`` per run (a
function of its own, compiled once per process: ``runner``), which loops over
the records, calling each unit through a *wrapper* (one per unit: it loads the unit's
arguments from the record and calls it, returning how many integers it read). The
wrapper calls the unit directly, so the unit's parameters stay ``noalias``.

At run time a call costs two more calls and a few loads (nanoseconds, against loop nests
of at least a few hundred).
"""
from __future__ import annotations

from funcgrad.lowering import engine

# (a process-long library, bound by name: a program whose code is all in units then has
# no loop of its own, and gets the loop-free pipeline: ``pipeline_choice``)
RUNNER = """define void @fg_main_fg_run_units(ptr %b, ptr %calls, ptr %fns, i64 %lo, i64 %hi) nounwind {
entry:
  br label %loop
loop:
  %k = phi i64 [%lo, %entry], [%next, %loop]
  %rec = getelementptr inbounds i64, ptr %calls, i64 %k
  %u = load i64, ptr %rec, align 8
  %fp = getelementptr inbounds ptr, ptr %fns, i64 %u
  %f = load ptr, ptr %fp, align 8
  %args = getelementptr inbounds i64, ptr %rec, i64 1
  %n = call i64 %f(ptr %b, ptr %args)
  %k1 = add i64 %k, 1
  %next = add i64 %k1, %n
  %more = icmp ult i64 %next, %hi
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""
_runner: dict = {}


@engine.provider("unit_runner")
def runner() -> None:
    """Compile (or link from the disk cache) and bind ``fg_run_units`` once per process."""
    if not _runner:  # (the dict itself: one found on disk is filled when it is linked)
        _runner["addrs"] = engine.compile_library("unit_runner/1", lambda: RUNNER, ["fg_run_units"], bind=True)


class CallTable:
    """The calls of one core function (``ctx``: its lowering context)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.records: list[int] = []
        self.units: dict[str, tuple[int, list]] = {}  # unit -> (number, parameter types)
        self.bases: dict[str, int] = {}  # base pointer's text -> its number in %fg_bases

    def add(self, calls: list) -> str:
        """Append ``calls`` ((unit, argument text) each) as records; return the core
        function's line running them."""
        lo = len(self.records)
        rec = self.records
        for name, args in calls:
            items = args.split(", ")
            entry = self.units.get(name)
            if entry is None:
                entry = self.units[name] = (len(self.units), [it.split(" ", 1)[0] for it in items])
            rec.append(entry[0])
            for it in items:
                ty, val = it.split(" ", 1)
                if ty == "ptr":
                    k = self.bases.get(val)
                    if k is None:
                        k = self.bases[val] = len(self.bases)
                    rec.append(k)
                else:
                    rec.append(int(val))
        return (f"  call void @fg_run_units(ptr %fg_bases, ptr @fg_unit_calls, ptr @fg_unit_fns, "
                f"i64 {lo}, i64 {len(rec)})")

    def finish(self, module) -> None:
        """Define the table, the wrappers and the runner in ``module``; fill the bases in
        the core function's prologue."""
        bases = sorted(self.bases.items(), key=lambda kv: kv[1])
        pro = self.ctx.prologue
        pro.append(f"  %fg_bases = alloca [{len(bases)} x ptr], align 8")
        for val, k in bases:
            pro.append(f"  %fg_bases.{k} = getelementptr inbounds ptr, ptr %fg_bases, i64 {k}")
            pro.append(f"  store ptr {val}, ptr %fg_bases.{k}, align 8")
        module.functions.append(
            f"@fg_unit_calls = internal constant [{len(self.records)} x i64] ["
            + ", ".join(f"i64 {v}" for v in self.records) + "]")
        fns = sorted(self.units.items(), key=lambda kv: kv[1][0])
        module.functions.append(
            f"@fg_unit_fns = internal constant [{len(fns)} x ptr] ["
            + ", ".join(f"ptr @{name}.w" for name, _ in fns) + "]")
        for name, (_, types) in fns:
            module.functions.append(_wrapper(name, types))
        module.declare("fg_run_units", "declare void @fg_run_units(ptr, ptr, ptr, i64, i64) nounwind")
        runner()


def _wrapper(name: str, types: list) -> str:
    lines = [f"define internal i64 @{name}.w(ptr %b, ptr %r) nounwind {{", "entry:"]
    args = []
    for j, ty in enumerate(types):
        lines.append(f"  %r{j} = getelementptr inbounds i64, ptr %r, i64 {j}")
        lines.append(f"  %i{j} = load i64, ptr %r{j}, align 8")
        if ty == "ptr":
            lines.append(f"  %q{j}.p = getelementptr inbounds ptr, ptr %b, i64 %i{j}")
            lines.append(f"  %q{j} = load ptr, ptr %q{j}.p, align 8")
            args.append(f"ptr %q{j}")
        else:
            args.append(f"i64 %i{j}")
    lines.append(f"  call void @{name}({', '.join(args)})")
    lines.append(f"  ret i64 {len(types)}")
    lines.append("}")
    return "\n".join(lines)
