"""The process-wide LLVM JIT: target machines, the optimisation pipeline, one ORC LLJIT.

Each compilation parses the IR text, optimises it (O2 with loop and SLP vectorisation; a
program without loops: O1 and the fast instruction selector, see ``pipeline``; a
program's entry wrappers are left unoptimised, see ``WRAPPERS``),
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

A module's code, its JIT library and the Python objects around it go with its handle;
``llvm_memory`` works around what llvmlite's bindings and LLVM keep (each module is
parsed into an LLVM context of its own, freed with it).
"""
from __future__ import annotations

import ctypes
import inspect
import os
import re
import threading
import time
import weakref

import llvmlite
import llvmlite.binding as llvm

from funcgrad.lowering import disk_cache, llvm_memory, program_cache

_lock = threading.RLock()  # held for all LLVM work (and across ``os.fork``: see the end)
_state: dict = {}
_module_cache: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # ir text -> live CompiledModule
_permanent: list = []  # modules compiled by compile_ir: never removed
_counter = [0]
_symbols: dict = {}  # name -> address of everything bound with add_symbol
# Names a module takes from outside: declared functions and external globals.
_DECLARE = re.compile(r"^(?:declare [^@\n]*@([\w.$]+)\(|@([\w.$]+) = external )", re.M)


def _init():
    if _state:
        return _state
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    triple = llvm.get_process_triple()
    target = llvm.Target.from_triple(triple)
    cpu, features = llvm.get_host_cpu_name(), _features()

    def make_tm(opt=2):
        return target.create_target_machine(cpu=cpu, features=features, opt=opt, reloc="static",
                                            codemodel="jitdefault", jit=True)

    opt_tm = make_tm()  # the pass pipeline and code generation; never handed to the JIT
    jit_tm = make_tm()  # the JIT's (kept alive with it)
    lljit = llvm.create_lljit_compiler(jit_tm)
    fingerprint = "\n".join([triple, cpu, features, f"llvmlite {llvmlite.__version__}", PIPELINES])
    _state.update(opt_tm=opt_tm, jit_tm=jit_tm, pto=_tuning(slp=True), pto_no_slp=_tuning(slp=False), lljit=lljit,
                  triple=triple, data_layout=str(opt_tm.target_data), fingerprint=fingerprint,
                  make_tm=make_tm)
    _bind_python_symbols()
    return _state


def _features() -> str:
    """The host's feature string; with AVX-512, minus LLVM's 256-bit vector preference
    (tuned for CPUs whose clock drops on 512-bit code), so loops and the vector-math
    library run 8 doubles per instruction: exp/log/tanh ~1.8x faster per element."""
    feats = host_features()
    return feats.flatten() + (",-prefer-256-bit" if feats.get("avx512f") else "")


_host: list = []


def host_features():
    """``llvm.get_host_cpu_features()``, asked once per process (~0.25 ms a call)."""
    if not _host:
        _host.append(llvm.get_host_cpu_features())
    return _host[0]


# The pipelines (part of the disk cache's fingerprint: change the text when they change).
PIPELINES = ("full: O2 loop+slp vectorize, codegen O2; loop-free programs: O1, codegen O0 (fast isel); "
             "entry wrappers optnone")
# A program's entry wrappers (``dispatch.tuple_entry``, ``pointer_entry``) check and unpack
# the arguments once per call: straight-line code without floating-point arithmetic (only
# exact loads and conversions), which the optimisation passes and SelectionDAG instruction
# selection made ~2 of the ~8 ms a one-line program (``x + 1.0``) took to compile. They
# are marked ``optnone`` (the passes skip them; code generation uses the fast instruction
# selector for them): the loops they call are compiled as before, and a call's dispatch
# time did not change (130 ns for a 0-d argument, 220 ns for three arrays, before and after).
WRAPPERS = ("fg_main_entry", "fg_main_entry_ptrs")


def tuning(slp: bool, speed: int = 2):
    """New pipeline tuning options (a pass builder made from them copies them)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=speed)
    pto.loop_vectorization = speed >= 2
    pto.slp_vectorization = slp
    return pto


_tuning = tuning


def _loop_free_tools():
    """(pass options, target machine) of the loop-free pipeline, made on first use."""
    st = _init()
    if "tm_fast" not in st:
        st["pto_loop_free"] = _tuning(slp=False, speed=1)
        st["tm_fast"] = st["make_tm"](0)
    return st["pto_loop_free"], st["tm_fast"]


from funcgrad.lowering.pipeline_choice import has_loops, pipeline  # noqa: E402,F401  (engine's API)


def _optimised(text: str, pto):
    """Parse, verify and optimise ``text``, then verify the result: LLVM's own passes
    can break a valid function (the SLP vectorizer does on some fused sort loops), and
    code generation would then abort the whole process instead of raising."""
    mod = llvm_memory.parse(text)  # (a context of its own: freed with it; on an error, when collected)
    prepare(mod)
    mod.verify()
    llvm_memory.run_pipeline(mod, _state["opt_tm"], pto)
    mod.verify()
    return mod


def prepare(mod) -> None:
    """Set ``mod``'s target and mark its entry wrappers (``WRAPPERS``) ``optnone``, before
    the optimisation passes."""
    mod.triple, mod.data_layout = _state["triple"], _state["data_layout"]
    for name in WRAPPERS:
        try:
            fn = mod.get_function(name)
        except NameError:
            continue
        if not fn.is_declaration:
            fn.add_function_attribute("noinline")  # (``optnone`` requires it)
            fn.add_function_attribute("optnone")


def _bind_python_symbols():
    # GIL release around long native work, called from generated code.
    api = ctypes.pythonapi
    for name in ("PyEval_SaveThread", "PyEval_RestoreThread"):
        _symbols[name] = ctypes.cast(getattr(api, name), ctypes.c_void_p).value


def fingerprint() -> str:
    """Target triple, host CPU and features, llvmlite version, optimisation pipeline."""
    return _init()["fingerprint"]


def add_symbol(name: str, address: int) -> None:
    """Bind the declared function ``name`` to ``address`` in every module compiled from
    now on (BLAS, LAPACK, the math libraries compiled by ``compile_ir``)."""
    _init()
    _symbols[name] = address


class CompiledModule:
    """One library in the JIT: ``addrs`` ({suffix: address}) and ``optimized`` (its
    optimised IR text, computed on request). Its machine code is unloaded when this
    handle is garbage-collected, so hold it as long as its code may run."""

    # (_text: str, or a function giving it)
    __slots__ = ("addrs", "_text", "_library", "_finalizer", "_kept", "__weakref__")

    def __init__(self, addrs, text, tracker, library: bool = False, generation=None):
        self.addrs, self._text, self._library = addrs, text, library
        self._kept = []  # modules this one's code calls into (``tiered``: the optimised tier)
        # A finalizer, not __del__: it holds the ORC resource tracker itself, so the
        # garbage collector cannot unload the code (finalising the tracker of a dead
        # cycle first) before the module's caches are released by that very code.
        self._finalizer = weakref.finalize(self, _unload, tracker, addrs.get("release"), generation)
        self._finalizer.atexit = False  # (the process is ending: nothing to give back)

    def keep(self, other: "CompiledModule") -> None:
        """Keep ``other`` loaded as long as this module."""
        self._kept.append(other)

    @property
    def optimized(self) -> str:
        """The optimised IR (re-optimised here: the object may have come from disk)."""
        with _lock:
            text = self._text if isinstance(self._text, str) else self._text()
            mod = _optimise_or_retry(text, pipeline(text, self._library))
            try:
                return str(mod)
            finally:
                llvm_memory.dispose(mod)


_dead: list = []  # unloads a finalizer could not do at once (see ``_unload``)
_RELEASE = ctypes.PYFUNCTYPE(None)  # (one type: ``PYFUNCTYPE`` makes a new one, a cycle, per call)


def _unload(tracker, release, generation=None):
    try:
        if release:  # the module's caches (a kept workspace) go before its code
            _RELEASE(release)()
        # Never wait for _lock in a finalizer: the collector may run it on a thread inside
        # an llvmlite call (holding llvmlite's own lock) while the thread holding _lock
        # waits for that lock. Then the unload waits for the next compile or load.
        if not _lock.acquire(blocking=False):
            _dead.append((tracker, generation))
            return
        try:
            _dead.append((tracker, generation))
            drain_unloads()
        finally:
            _lock.release()
    except Exception:  # pragma: no cover - interpreter shutdown
        pass


def drain_unloads() -> None:
    """Unload the libraries whose handles died while _lock was busy (call with it held)."""
    while _dead:
        tracker, generation = _dead.pop()
        tracker.close()  # unloads the library: its code and data are freed
        if generation is not None:  # (and its LLJIT, when it was the last there)
            llvm_memory.release(generation)


def _optimise_or_retry(text: str, kind: str = "full"):
    st = _init()
    if kind == "loop-free":
        return _optimised(text, _loop_free_tools()[0])
    try:
        return _optimised(text, st["pto"])
    except RuntimeError:  # an optimiser bug, not ours: retry without the SLP vectorizer
        return _optimised(text, st["pto_no_slp"])


def object_key(text: str, library: bool = False) -> str | None:
    """The disk-cache key of ``text``'s object code (None when the cache is off). A
    program's pipeline follows from its text (and the fingerprint names the policy); a
    library's text is keyed apart."""
    if not disk_cache.enabled():
        return None
    return disk_cache.key(text, _init()["fingerprint"] + ("\nlibrary" if library else ""))


def _object_code(text: str, library: bool = False, cached: bool = True) -> bytes:
    """The relocatable object for ``text``: from the disk cache (unless not ``cached``), or
    compiled (and stored)."""
    st = _init()
    key = object_key(text, library)
    obj = disk_cache.load(key) if key and cached else None
    if obj is None:
        kind = pipeline(text, library)
        mod = _optimise_or_retry(text, kind)
        try:
            obj = (st["opt_tm"] if kind == "full" else _loop_free_tools()[1]).emit_object(mod)
        finally:
            llvm_memory.dispose(mod)
        if key:
            disk_cache.store(key, obj)
    return obj


def declared_names(text: str) -> list[str]:
    """The names ``text`` takes from outside (declared functions, external globals)."""
    return [m.group(1) or m.group(2) for m in _DECLARE.finditer(text)]


def compile_module(text: str, symbols: list[str], unique: str = "@fg_main_", imports=None,
                   library: bool = False) -> CompiledModule:
    """JIT ``text`` as a library of its own; return its ``CompiledModule`` (shared with
    any live module compiled from the same text and imports). ``symbols`` are the
    suffixes (after ``unique``) of the functions whose addresses are wanted; ``imports``
    ({name: address}) binds external globals of this module alone (its constants).

    Libraries are separate symbol scopes, so identical names in two of them do not
    clash, and the text is compiled as it is: the same text gives the same object code
    in every process (which is what the disk cache stores). ``library``: its functions
    are called by other modules (``compile_ir``), so it always gets the full pipeline."""
    imports = imports or {}
    cache_key = (text, tuple(sorted(imports.items())), library) if imports or library else text
    with _lock:
        hit = _module_cache.get(cache_key)
        if hit is not None and all(s in hit.addrs for s in symbols):
            return hit
        drain_unloads()
        _last_compile[0] = time.monotonic()
        key = object_key(text, library)
        obj = disk_cache.load(key) if key else None
        if key is None and _tiered().eligible(text, symbols, unique, library):  # (disk cache off)
            handle = _tiered().compile_quick(text, symbols, imports)  # (the optimised code follows)
        else:
            link = (declared_names(text), symbols, unique, imports, text, library)
            handle = _link_cached(key, obj, *link) if obj is not None else None
            if handle is None:
                handle = _link(_object_code(text, library, cached=False), *link)
            # The same program compiled again in this process is found by the program
            # cache, which links by object key (``load_module``): it gets this module
            # instead of a second copy of its code.
            if key is not None:
                _module_cache[("object", key, tuple(sorted(imports.items())))] = handle
        _module_cache[cache_key] = handle
        _last_compile[0] = time.monotonic()
        return handle


def _tiered():
    """``tiered`` (it imports this module), imported when first needed: with the disk
    cache on it is never needed, and its import (its worker's ``queue``) cost ~1 ms of a
    new process's first ``jit`` call."""
    from funcgrad.lowering import tiered

    return tiered


_last_compile = [0.0]  # time.monotonic() of the last compile on a calling thread


def last_compile() -> float:
    """When ``compile_module`` last compiled (``time.monotonic()``): ``tiered``'s worker
    waits for a quiet moment, since LLVM runs one call at a time in a process."""
    return _last_compile[0]


def load_module(key: str, declared: list[str], symbols: list[str], imports: dict, text,
                library: bool = False) -> CompiledModule | None:
    """Link the object stored on disk under ``key`` (see ``object_key``) without its IR
    text, or None if the disk cache no longer has it. ``declared``: its external names
    (``declared_names`` of the text), bound from ``imports`` and ``add_symbol``;
    ``text``: a function giving the IR text when someone asks for it (``optimized``)."""
    cache_key = ("object", key, tuple(sorted(imports.items())))
    with _lock:
        hit = _module_cache.get(cache_key)
        if hit is not None and all(s in hit.addrs for s in symbols):
            return hit
        _init()
        drain_unloads()
        obj = disk_cache.load(key)
        handle = _link_cached(key, obj, declared, symbols, "@fg_main_", imports, text, library) if obj else None
        if handle is not None:
            _module_cache[cache_key] = handle
        return handle


def _link_cached(key: str, obj: bytes, *args) -> CompiledModule | None:
    """``_link`` of an object read from the disk cache, or None when it does not link (a
    symbol missing, an object LLVM rejects): the entry is deleted and the caller compiles,
    so a bad entry costs one compilation, never an error."""
    try:
        return _link(obj, *args)
    except (RuntimeError, KeyError):
        disk_cache.discard(key)
        return None


def _link(obj: bytes, declared, symbols, unique, imports, text, library=False, extra=None,
          quick=False) -> CompiledModule:
    """Link ``obj`` (or a list of objects: one JIT library) and return its handle."""
    st = _init()
    if _deferred:  # (libraries found on disk: linked before anything that may need them)
        _link_deferred()
    if not quick:  # (optimised code never binds a library's quick code: see ``_quick_bound``)
        _settle(declared)
    builder = llvm.JITLibraryBuilder()
    for o in obj if isinstance(obj, list) else [obj]:
        builder.add_object_img(o)
    builder.add_current_process()
    for name in declared:
        address = imports.get(name, _symbols.get(name))
        if address is not None:
            builder.import_symbol(name, address)
    extra = extra or {}
    for s in symbols:
        builder.export_symbol(unique[1:] + s)
    for name in extra.values():
        builder.export_symbol(name)
    _counter[0] += 1
    generation = None if library else llvm_memory.take(st["jit_tm"])  # (see ``llvm_memory``)
    try:
        tracker = builder.link(st["lljit"] if library else generation.jit, f"fg_lib{_counter[0]}")
    except BaseException:
        if generation is not None:
            llvm_memory.release(generation)
        raise
    addrs = {s: tracker[unique[1:] + s] for s in symbols}
    addrs.update({k: tracker[name] for k, name in extra.items()})
    return CompiledModule(addrs, text, tracker, library, generation)


def link_object(obj: bytes, declared, symbols, imports, text, extra_exports=None, library=False,
                quick=False) -> CompiledModule:
    """Link a program's object code (``@fg_main_<symbol>`` entry points) as a library of
    its own; ``extra_exports`` ({key: symbol}) adds more addresses to ``addrs``. ``quick``:
    ``tiered``'s quick code, which may bind libraries' quick code."""
    with _lock:
        return _link(obj, declared, symbols, "@fg_main_", imports, text, library, extra_exports, quick)


# Names bound (``add_symbol``) to a library's quick code (``tiered.compile_library_quick``)
# whose optimised code is not linked yet -> a function linking it and re-binding the names.
# Only quick program code may call quick library code: any other link of a module that
# declares one of these names first makes the optimised library (``_settle``).
_quick_bound: dict = {}


def _settle(declared) -> None:
    for name in declared:
        upgrade = _quick_bound.get(name)
        if upgrade is not None:
            upgrade()


# --- what a program needs besides its object code -------------------------------------------
# Emission binds some names on demand (a math library compiled, a LAPACK routine looked
# up); a program loaded from the disk cache without being emitted (``program_cache``) must
# have them bound again. Each such binder is a ``provider``: its calls during emission
# are recorded (JSON-able arguments) and replayed on load.
_providers: dict = {}
_recording = threading.local()


def provider(kind: str):
    """Decorator: ``fn(*args)`` binds names a program's code will import; ``args`` are
    strings, numbers and bools."""

    def deco(fn):
        _providers[kind] = fn
        signature = inspect.signature(fn)
        arity = len(signature.parameters)

        def wrapped(*args, **kwargs):
            log = getattr(_recording, "log", None)
            if log is not None:  # (recorded positionally, defaults filled in; once each:
                given = args
                if kwargs or len(args) != arity:  # emission asks per call site)
                    bound = signature.bind(*args, **kwargs)
                    bound.apply_defaults()
                    given = bound.args
                entry = [kind, *given]
                if entry not in log:
                    log.append(entry)
            return fn(*args, **kwargs)

        wrapped.__name__, wrapped.__doc__, wrapped.__wrapped__ = fn.__name__, fn.__doc__, fn
        return wrapped

    return deco


class recording:
    """``with recording() as log:`` collects the provider calls made inside."""

    def __enter__(self):
        self._outer = getattr(_recording, "log", None)
        _recording.log = self.log = []
        return self.log

    def __exit__(self, *exc):
        _recording.log = self._outer
        if self._outer is not None:
            self._outer.extend(e for e in self.log if e not in self._outer)


# Requirements already replayed in this process: providers bind names once per process, so
# a second replay of the same call is a no-op (records written before the log was
# deduplicated list a math library once per call site: 30 calls for the 50-op W10).
_replayed: set = set()


def replay(requirement) -> None:
    """Call the provider a recorded ``[kind, *args]`` names (KeyError/TypeError if the
    record does not fit this funcgrad)."""
    try:
        token = tuple(requirement)
        done = token in _replayed
    except TypeError:  # (an unhashable argument: not a record this code wrote)
        token, done = None, False
    if done:
        return
    kind, *args = requirement
    _providers[kind](*args)
    if token is not None:
        _replayed.add(token)


def live_modules() -> int:
    """How many compiled libraries are loaded now (the process-long ones included)."""
    with _lock:  # (a module may be cached under two keys: its text and its object key)
        return len({id(m) for m in _module_cache.values()})


def compile_ir(text: str, symbols: list[str], unique: str = "@fg_main_") -> dict:
    """``compile_module`` for a module that stays for the whole process; returns
    {suffix: address}."""
    handle = compile_module(text, symbols, unique, library=True)
    with _lock:
        _permanent.append(handle)
    return handle.addrs


def compile_library(name: str, make_text, symbols: list[str], bind: bool = False) -> dict:
    """``compile_ir(make_text(), symbols)`` for a process-long library known by ``name``
    (unique to what its text depends on besides funcgrad's source: e.g. the function and
    its dtype). With the disk cache on, a record under ``name`` (``program_cache``) gives
    its object code directly: a warm process links it without emitting and hashing the
    text (``make_text`` is called only on a miss, or when someone asks for the IR).

    ``bind``: bind each symbol by its own name (``add_symbol``) for the modules that
    declare it. Such a library may be tiered (``tiered.compile_library_quick``: disk cache
    off, tiering on): its quick code is bound first and the optimised code re-bound when
    the worker has compiled it; the returned addresses are the first ones bound."""
    key = program_cache.library_key(name, _init()["fingerprint"]) if disk_cache.enabled() else None
    record = program_cache.load_library(key) if key else None
    if record is not None and bind:  # (linked with the others found, before the next link)
        obj = disk_cache.load(record["object"])
        if obj is not None:
            program_cache.counts["library_hits"] += 1
            addrs: dict = {}
            with _lock:
                _deferred.append((obj, record["declared"], symbols, addrs, make_text))
            return addrs
    if record is not None:
        try:
            handle = load_module(record["object"], record["declared"], symbols, {}, make_text, library=True)
        except (KeyError, RuntimeError):  # a record that does not fit its object: compile
            handle = None
        if handle is not None and all(s in handle.addrs for s in symbols):
            program_cache.counts["library_hits"] += 1
            with _lock:
                _permanent.append(handle)
                _bind(handle.addrs, symbols, bind)
            return handle.addrs
    text = make_text()
    if bind and key is None:
        with _lock:
            if _module_cache.get((text, (), True)) is None and _tiered().library_eligible(text):
                return _tiered().compile_library_quick(text, symbols)
    addrs = compile_ir(text, symbols)
    with _lock:
        _bind(addrs, symbols, bind)
    if key:
        program_cache.store_library(key, object_key(text, library=True), declared_names(text))
    return addrs


# Process-long libraries bound by name that a warm process finds in the disk cache (a
# program record's vector-math functions, replayed one by one) wait here and are linked
# together, as one JIT library, just before the next module is linked (the first that may
# need them): one LLJIT link and no per-library Python work in between (~0.1 ms in all for
# W10's three). Entries: (object, declared names, symbols, the addresses dict
# ``compile_library`` returned, to fill in, the text's maker).
_deferred: list = []


def _link_deferred() -> None:
    pending = _deferred[:]
    _deferred.clear()
    try:
        joint = _link([p[0] for p in pending], sorted({n for p in pending for n in p[1]}),
                      [s for p in pending for s in p[2]], "@fg_main_", {}, _no_text, True)
        _permanent.append(joint)
    except RuntimeError:  # (objects that do not link together: each on its own, as before)
        joint = None
    for obj, declared, symbols, addrs, make_text in pending:
        handle = joint
        if handle is None:
            try:
                handle = _link(obj, declared, symbols, "@fg_main_", {}, make_text, True)
            except RuntimeError:  # (an object that does not link: compiled from its text)
                handle = compile_module(make_text(), symbols, library=True)
            _permanent.append(handle)
        addrs.update({s: handle.addrs[s] for s in symbols})
        _bind(addrs, symbols, True)


def _no_text() -> str:
    return "; several libraries linked as one (their IR: each library's own text)\n"


def _bind(addrs: dict, symbols, bind: bool) -> None:
    for s in symbols if bind else ():
        _symbols[s] = addrs[s]
        _quick_bound.pop(s, None)


# ``os.fork()`` waits until no other thread is compiling or linking (LLVM's state, and
# this lock, would stay half-held in the child, whose only thread is the forking one:
# its next ``jit`` hung), and the child starts with the lock free.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release,
                        after_in_child=_lock._at_fork_reinit)
