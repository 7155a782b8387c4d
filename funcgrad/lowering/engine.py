"""The process-wide LLVM JIT: target machine, optimisation pipeline, one MCJIT engine.

MCJIT takes ownership of the TargetMachine it is created with, and engines that are
garbage-collected take shared state down with them (see the llvmlite notes), so this
module keeps exactly one engine alive for the whole process, created from an empty
module, and adds one module per compiled jaxpr. The optimisation pipeline uses a
*separate* TargetMachine that is never handed to an engine.

Compiled modules are cached in-process by the text of their (unoptimised) IR, so
lowering the same program twice costs only the Python-side IR construction.
"""
from __future__ import annotations

import ctypes
import threading

import llvmlite.binding as llvm

_lock = threading.RLock()
_state: dict = {}
_module_cache: dict[str, tuple] = {}  # ir text -> (addresses by name, optimised ir text)
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


def compile_ir(text: str, symbols: list[str], unique: str = "@fg_main_") -> tuple[dict, str]:
    """Optimise and JIT ``text``; return ({suffix: address}, optimised IR text).

    Global names in ``text`` starting with ``unique`` are renamed per compilation so
    that modules with identical text can coexist in the one engine; ``symbols`` are
    the suffixes (after ``unique``) of the functions whose addresses are wanted."""
    with _lock:
        hit = _module_cache.get(text)
        if hit is not None:
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
        result = (addrs, optimized.replace(prefix, unique))
        _module_cache[text] = result
        return result
