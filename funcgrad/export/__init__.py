"""``funcgrad.export``: ship a jitted function without its source (``jax.export``'s API).

>>> exp = fg.export.export(fg.jit(f))(fg.ShapeDtypeStruct((3,), np.float64))
>>> blob = exp.serialize(vjp_order=1)          # bytes: write them anywhere
>>> g = fg.export.deserialize(blob)            # in another process, without f's source
>>> g.call(np.ones(3)); fg.grad(lambda x: g.call(x).sum())(np.ones(3))

``fg.export(jit(f))`` works too: the module is callable (it is ``export``), so
``funcgrad.export`` is both JAX's module and the function; ``fg.deserialize`` is
``deserialize``.
``Exported`` objects pickle as their blob (``pickle.loads`` calls ``deserialize``).

The format (version 1)
----------------------
All integers little-endian. A 72-byte prefix, then a header and a data section::

    offset  size  field
    0       16    magic b"FUNCGRAD-EXPORT\\0"
    16      4     format version (u32; this reader accepts ``SUPPORTED_VERSIONS``)
    20      4     flags (u32, 0)
    24      8     header length H (u64)
    32      8     data length D (u64)
    40      32    SHA-256 of the H + D bytes that follow
    72      H     header: UTF-8 JSON (an object)
    72+H    D     data: raw little-endian array bytes, each buffer 8-aligned

The header is ``{"producer": "funcgrad <version>", "exports": [record, ...]}``; the
first record is the function, each next one the VJP program of the one before
(``serialize(vjp_order=k)`` writes k of them). A record is ``{"name", "in_tree",
"out_tree", "jaxprs", "root"}``: pytree structures (``funcgrad/export/trees.py``) and
the program, a table of jaxprs whose entry ``root`` is the function
(``funcgrad/export/codec.py`` gives the grammar: primitives by name, params encoded by
type, constants as byte ranges of the data section).

What is stored is the program after ``jit``'s inlining pass: nested jitted calls,
``custom_jvp``/``custom_vjp`` calls and checkpoints replaced by their bodies (as compiled
code runs them; JAX exports the lowered program too), so nothing in it is Python code.
A program that still holds a Python callable (a host callback) or a primitive with no
compiled form (a collective outside the ``vmap`` that binds its axis) is refused at
export with ``ExportError``.

Loading never executes anything from the blob: the header is JSON, primitives and
pytree nodes are looked up by name in what this process registered, every length and
reference is checked, and the program is checked in full before it is compiled or run
(``funcgrad/export/check.py``: every equation of every sub-program against its declared
inputs and outputs, every param by type and value, host callbacks refused), since anyone
can write a blob with a valid checksum; anything wrong is an ``ExportError`` (a
``ValueError``) naming the sub-program and equation.

Shapes are static: there is no shape-polymorphic export (``jax.export.symbolic_shape``).
funcgrad's IR has integer dimensions throughout and its compiled code is specialised to
them, so a symbolic batch dimension would need symbolic shapes in every abstract-eval
rule and in the lowering; export one signature per batch size instead (or ``vmap`` the
deserialized function, which works).
"""
import sys
import types

from funcgrad.export.exported import Exported, deserialize, export
from funcgrad.export.trees import register_namedtuple_serialization, register_pytree_node_serialization
from funcgrad.export.wire import FORMAT_VERSION, SUPPORTED_VERSIONS

minimum_supported_serialization_version = min(SUPPORTED_VERSIONS)
maximum_supported_serialization_version = max(SUPPORTED_VERSIONS)

__all__ = [
    "Exported", "export", "deserialize", "register_pytree_node_serialization", "register_namedtuple_serialization",
    "FORMAT_VERSION", "SUPPORTED_VERSIONS", "minimum_supported_serialization_version",
    "maximum_supported_serialization_version",
]


class _CallableModule(types.ModuleType):
    """``funcgrad.export(jit(f))`` calls ``export`` (the module stays importable as one)."""

    def __call__(self, fun_jit, **kwargs):
        return export(fun_jit, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
