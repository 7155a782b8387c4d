"""The process-wide LLVM JIT: target machines, the optimisation pipeline, one ORC LLJIT.

Each compilation parses the IR text, optimises it (O2 with loop and SLP vectorisation),
verifies it, and emits a relocatable object with a TargetMachine that is never handed to
the JIT; the object is linked into the LLJIT as a library of its own. The library's
ResourceTracker lives in the ``CompiledModule`` handle: when the last handle dies (with
the executables holding it) the library is unloaded and its machine code and data are
freed. (MCJIT, used before, never frees code.) Functions bound by name with
``add_symbol`` (BLAS, LAPACK, the math libraries compiled by ``compile_ir``) are imported
into each library that declares them.

Compiled modules are cached in-process by the text of their (unoptimised) IR, so
lowering the same program twice costs only the Python-side IR construction, for as long
as something holds the module. ``compile_ir`` compiles helper libraries that live for the
whole process (math kernels other modules call).

What is not freed: llvmlite's new-pass-manager binding keeps about 30 kB per pipeline
built and about 45 kB per module optimised (measured with llvmlite 0.50 on a one-
instruction function; independent of our IR), so compiling many fresh programs still
grows the heap by ≈ 80 kB each. Reusing one pipeline is not possible (running it
consumes it); the disk cache is the way to reuse compiled code without recompiling.
"""
from __future__ import annotations

import ctypes
import re
import threading
import weakref

import llvmlite.binding as llvm

_lock = threading.RLock()
_state: dict = {}
_module_cache: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # ir text -> live CompiledModule
_permanent: list = []  # modules compiled by compile_ir: never removed
_counter = [0]
_symbols: dict = {}  # name -> address of everything bound with add_symbol
_DECLARE = re.compile(r"^declare [^@\n]*@([\w.$]+)\(", re.M)


def _init():
    if _state:
        return _state
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    triple = llvm.get_process_triple()
    target = llvm.Target.from_triple(triple)

    def make_tm():
        return target.create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
            opt=2, reloc="static", codemodel="jitdefault", jit=True,
        )

    opt_tm = make_tm()  # the pass pipeline and code generation; never handed to the JIT
    jit_tm = make_tm()  # the JIT's (kept alive with it)
    lljit = llvm.create_lljit_compiler(jit_tm)
    _state.update(opt_tm=opt_tm, jit_tm=jit_tm, pto=_tuning(slp=True), pto_no_slp=_tuning(slp=False), lljit=lljit,
                  triple=triple, data_layout=str(opt_tm.target_data))
    _bind_python_symbols()
    return _state


def _tuning(slp: bool):
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pto.loop_vectorization = True
    pto.slp_vectorization = slp
    return pto


def _optimised(text: str, pto):
    """Parse, verify and optimise ``text``, then verify the result: LLVM's own passes
    can break a valid function (the SLP vectorizer does on some fused sort loops), and
    code generation would then abort the whole process instead of raising."""
    st = _state
    mod = llvm.parse_assembly(text)
    mod.triple, mod.data_layout = st["triple"], st["data_layout"]
    mod.verify()
    pb = llvm.create_pass_builder(st["opt_tm"], pto)
    pb.getModulePassManager().run(mod, pb)
    mod.verify()
    return mod


def _bind_python_symbols():
    # GIL release around long native work, called from generated code.
    api = ctypes.pythonapi
    for name in ("PyEval_SaveThread", "PyEval_RestoreThread"):
        _symbols[name] = ctypes.cast(getattr(api, name), ctypes.c_void_p).value


def add_symbol(name: str, address: int) -> None:
    """Bind the declared function ``name`` to ``address`` in every module compiled from
    now on (BLAS, LAPACK, the math libraries compiled by ``compile_ir``)."""
    _init()
    _symbols[name] = address


class CompiledModule:
    """One library in the JIT: ``addrs`` ({suffix: address}) and ``optimized`` (its
    optimised IR text, with the unique prefix put back). Its machine code is unloaded
    when this handle is garbage-collected (the ORC resource tracker it holds), so hold
    it as long as its code may run."""

    __slots__ = ("addrs", "optimized", "_tracker", "__weakref__")

    def __init__(self, addrs, optimized, tracker):
        self.addrs, self.optimized, self._tracker = addrs, optimized, tracker

    def __del__(self):
        tracker, self._tracker = self._tracker, None
        if tracker is None:
            return
        try:
            with _lock:
                tracker.close()  # unloads the library: its code and data are freed
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


def compile_module(text: str, symbols: list[str], unique: str = "@fg_main_") -> CompiledModule:
    """Optimise and JIT ``text``; return its ``CompiledModule`` (shared with any live
    module compiled from the same text).

    Global names in ``text`` starting with ``unique`` are renamed per compilation so
    that modules with identical text can coexist in the one engine; ``symbols`` are
    the suffixes (after ``unique``) of the functions whose addresses are wanted."""
    with _lock:
        hit = _module_cache.get(text)
        if hit is not None and all(s in hit.addrs for s in symbols):
            return hit
        st = _init()
        _counter[0] += 1
        prefix = f"@fg_k{_counter[0]}_"
        renamed = text.replace(unique, prefix)
        try:
            mod = _optimised(renamed, st["pto"])
        except RuntimeError:  # an optimiser bug, not ours: retry without the SLP vectorizer
            mod = _optimised(renamed, st["pto_no_slp"])
        optimized = str(mod)
        obj = st["opt_tm"].emit_object(mod)
        mod.close()
        builder = llvm.JITLibraryBuilder().add_object_img(obj).add_current_process()
        for name in _DECLARE.findall(renamed):
            if name in _symbols:
                builder.import_symbol(name, _symbols[name])
        for s in symbols:
            builder.export_symbol(prefix[1:] + s)
        tracker = builder.link(st["lljit"], prefix[1:-1])
        addrs = {s: tracker[prefix[1:] + s] for s in symbols}
        handle = CompiledModule(addrs, optimized.replace(prefix, unique), tracker)
        _module_cache[text] = handle
        return handle


def live_modules() -> int:
    """How many compiled libraries are loaded now (the process-long ones included)."""
    with _lock:
        return len(_module_cache)


def compile_ir(text: str, symbols: list[str], unique: str = "@fg_main_") -> tuple[dict, str]:
    """``compile_module`` for a module that stays for the whole process; returns
    ({suffix: address}, optimised IR text)."""
    handle = compile_module(text, symbols, unique)
    with _lock:
        _permanent.append(handle)
    return handle.addrs, handle.optimized
