"""JAX names funcgrad leaves out on purpose, with the reason: the one list of them.

``tools/jax_names.py`` reports these apart from the missing names and writes the page
docs/reference/jax-differences.md from this module (``python tools/jax_names.py --docs``;
a test checks the page is current and that every name here is a JAX name funcgrad lacks).
Keys are the rows of ``tools/jax_names.py``; names are as that tool prints them.
"""

_REFS = ("mutable array references: funcgrad's values are immutable and its programs pure (no "
         "read/write effects in the IR); carry state through function arguments and results")
_INTERNALS = ("JAX's internal modules (interpreters, API utilities, jaxlib); funcgrad's own are "
              "funcgrad.core and funcgrad.transforms, and funcgrad.extend holds the IR under JAX's names")
_TRANSFERS = "guards transfers between host and devices; funcgrad's arrays are host memory, there are none"
_RANDOM_CONFIG = ("random-number configuration: funcgrad.random has one implementation (Threefry-2x32 with "
                  "the partitionable counter layout) and no key-reuse checker")

OMITTED: dict[str, dict[str, str]] = {
    "lax": {
        "after_all": "XLA tokens, which order side effects across computations; funcgrad runs debug.print "
                     "and callbacks in program order without them",
        "create_token": "XLA tokens (see after_all)",
        "precv": "point-to-point receive between devices of a pipeline (shard_map); funcgrad's named axes "
                 "are vmap axes on one device: use ppermute",
        "psend": "point-to-point send between devices of a pipeline (see precv)",
        "ragged_all_to_all": "ragged all-to-all between the devices of a mesh (shard_map)",
        "rng_uniform": "XLA's stateful random generator: a stateful operation has no place in funcgrad's "
                       "pure programs; use funcgrad.random or lax.rng_bit_generator",
    },
    "nn": {
        "get_scaled_dot_general_config": "block-scaling configurations (mxfp8, nvfp4) are float8/float4 "
                                         "element types, which funcgrad does not compute in "
                                         "(nn.scaled_dot_general with configs raises UnsupportedDtypeError)",
    },
    "top level": {
        "Ref": _REFS, "new_ref": _REFS, "empty_ref": _REFS, "free_ref": _REFS, "freeze": _REFS, "ref": _REFS,
        "ds": "a slice helper for mutable references and Pallas kernels (see Ref)",
        "ad": _INTERNALS, "api_util": _INTERNALS, "interpreters": _INTERNALS, "lib": _INTERNALS,
        "ffi": "XLA's foreign-function interface for custom kernels; funcgrad calls Python/NumPy code with "
               "pure_callback and io_callback",
        "memory": "memory kinds of accelerator devices (device, pinned host); funcgrad has one memory",
        "profiler": "XLA/TensorBoard profiler traces, which funcgrad does not produce (it logs compilations "
                    "and dumps programs instead: FUNCGRAD_LOG_COMPILES, FUNCGRAD_DUMP_JAXPR, FUNCGRAD_DUMP_IR)",
        "monitoring": "listeners for JAX's internal metrics (compilation-cache events and durations)",
        "live_arrays": "funcgrad's arrays are NumPy memory owned by Python's reference counting; nothing "
                       "tracks them",
        "array_garbage_collection_guard": "a policy for device buffers freed by Python's garbage collector; "
                                          "funcgrad's arrays are plain host memory",
        "transfer_guard": _TRANSFERS, "transfer_guard_device_to_device": _TRANSFERS,
        "transfer_guard_device_to_host": _TRANSFERS, "transfer_guard_host_to_device": _TRANSFERS,
        "thread_guard": "a check for multi-process operations issued from several threads; funcgrad runs "
                        "in one process",
        "allow_f16_reductions": "float16 is not a dtype funcgrad computes in (see Narrow float types)",
        "jax2tf_associative_scan_reductions": "an option of jax2tf, the TensorFlow exporter",
        "check_tracer_leaks": "funcgrad raises UnexpectedTracerError whenever an escaped tracer is used; "
                              "JAX's extra end-of-transform leak check by reference counting is not built",
        "checking_leaks": "see check_tracer_leaks",
        "debug_key_reuse": _RANDOM_CONFIG, "default_prng_impl": _RANDOM_CONFIG,
        "enable_custom_prng": _RANDOM_CONFIG, "legacy_prng_key": _RANDOM_CONFIG,
        "threefry_partitionable": _RANDOM_CONFIG,
        "softmax_custom_jvp": "chooses between two formulations of nn.softmax's derivative in JAX (same "
                              "values); funcgrad has one",
        "make_user_context": "extra keys for JAX's tracing and compilation caches; funcgrad's jit caches key "
                             "on the arguments and static arguments only",
    },
}

NARROW_FLOATS = (
    "funcgrad computes in bool, int8-64, uint8-64, float32, float64, complex64 and complex128. "
    "`funcgrad.numpy.float16` (NumPy's) and JAX's narrow types from ml_dtypes (`bfloat16`, "
    "`float8_e4m3fn` and the other `float8_*`, `float6_*`, `float4_e2m1fn`, `int4`/`int2`/`int1`, "
    "`uint4`/`uint2`/`uint1`) are named but not computed in: using one as a dtype (`dtype=`, "
    "`astype`, `numpy.dtype(t)`, a float16 array as an argument, under any transform) or calling one "
    "raises `funcgrad.errors.UnsupportedDtypeError` naming the type."
)
