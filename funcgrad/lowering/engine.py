"""The process-wide LLVM JIT: target machine, optimisation pipeline, one MCJIT engine.

MCJIT takes ownership of the TargetMachine it is created with, and engines that are
garbage-collected take shared state down with them (see the llvmlite notes), so this
module keeps exactly one engine alive for the whole process, created from an empty
module, and adds one module per compiled jaxpr. The optimisation pipeline uses a
*separate* TargetMachine that is never handed to an engine.

Compiled modules are cached in-process by the text of their (unoptimised) IR, so
lowering the same program twice costs only the Python-side IR construction, for as
long as something holds the module: ``compile_module`` returns a ``CompiledModule``
handle, and when the last handle dies (with the executables holding it) the module is
removed from the engine and its LLVM IR freed. ``compile_ir`` compiles helper modules
that live for the whole process (math kernels other modules link against).
"""
from __future__ import annotations

import ctypes
import threading
import weakref

import llvmlite.binding as llvm

_lock = threading.RLock()
_state: dict = {}
_module_cache: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # ir text -> live CompiledModule
_permanent: list = []  # modules compiled by compile_ir: never removed
_counter = [0]


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

    opt_tm = make_tm()  # for the pass pipeline only; never owned by an engine
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), make_tm())
    _state.update(opt_tm=opt_tm, pto=_tuning(slp=True), pto_no_slp=_tuning(slp=False), engine=engine,
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
        llvm.add_symbol(name, ctypes.cast(getattr(api, name), ctypes.c_void_p).value)


def add_symbol(name: str, address: int) -> None:
    _init()
    llvm.add_symbol(name, address)


class CompiledModule:
    """One module in the engine: ``addrs`` ({suffix: address}) and ``optimized`` (its
    optimised IR text, with the unique prefix put back). Removed from the engine when
    this handle is garbage-collected, so hold it as long as its code may run."""

    __slots__ = ("addrs", "optimized", "_mod", "__weakref__")

    def __init__(self, addrs, optimized, mod):
        self.addrs, self.optimized, self._mod = addrs, optimized, mod

    def __del__(self):
        mod, self._mod = self._mod, None
        if mod is None:
            return
        try:
            with _lock:
                _state["engine"].remove_module(mod)
            mod.close()  # frees the LLVM module (machine code stays with MCJIT's memory manager)
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
        st["engine"].add_module(mod)
        st["engine"].finalize_object()
        addrs = {s: st["engine"].get_function_address(prefix[1:] + s) for s in symbols}
        handle = CompiledModule(addrs, optimized.replace(prefix, unique), mod)
        _module_cache[text] = handle
        return handle


def compile_ir(text: str, symbols: list[str], unique: str = "@fg_main_") -> tuple[dict, str]:
    """``compile_module`` for a module that stays for the whole process; returns
    ({suffix: address}, optimised IR text)."""
    handle = compile_module(text, symbols, unique)
    with _lock:
        _permanent.append(handle)
    return handle.addrs, handle.optimized
