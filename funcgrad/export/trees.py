"""Pytree structures (``PyTreeDef``) in the export header, and their leaf paths.

A node is ``["*"]`` (a leaf), ``["tuple", null, [child...]]``, ``["list", ...]``,
``["dict", [key...], [child...]]`` (str or int keys), ``["None", null, []]``, or
``["custom", name, aux, [child...]]`` for a type registered with
``register_pytree_node_serialization`` / ``register_namedtuple_serialization`` (as in
``jax.export``): the blob names the registration, never a Python class.
"""
from __future__ import annotations

from typing import Callable

from funcgrad.core.pytree import PyTreeDef
from funcgrad.errors import ExportError

_by_type: dict[type, tuple] = {}  # type -> (serialized name, serialize_auxdata)
_by_name: dict[str, tuple] = {}  # serialized name -> (type, deserialize_auxdata)
_BUILTIN = {tuple: "tuple", list: "list", dict: "dict", type(None): "None"}
_BUILTIN_TYPES = {v: k for k, v in _BUILTIN.items()}


def register_pytree_node_serialization(nodetype: type, *, serialized_name: str,
                                       serialize_auxdata: Callable[[object], bytes],
                                       deserialize_auxdata: Callable[[bytes], object]):
    """Let exported functions take or return ``nodetype`` (already a pytree node):
    its aux data is stored as the bytes ``serialize_auxdata(aux)`` gives, and read back
    with ``deserialize_auxdata(bytes)`` in the loading process, which must make the same
    registration before calling ``deserialize``. Returns ``nodetype``."""
    if not isinstance(serialized_name, str) or not serialized_name:
        raise TypeError("register_pytree_node_serialization: serialized_name must be a non-empty str")
    if nodetype in _by_type or serialized_name in _by_name or nodetype in _BUILTIN:
        raise ValueError(f"register_pytree_node_serialization: {nodetype.__name__} or the name "
                         f"{serialized_name!r} is already registered")
    _by_type[nodetype] = (serialized_name, serialize_auxdata)
    _by_name[serialized_name] = (nodetype, deserialize_auxdata)
    return nodetype


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str):
    """``register_pytree_node_serialization`` for a ``collections.namedtuple`` class."""
    if not (issubclass(nodetype, tuple) and hasattr(nodetype, "_fields")):
        raise TypeError(f"register_namedtuple_serialization: {nodetype.__name__} is not a namedtuple class")
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name, serialize_auxdata=lambda aux: b"",
        deserialize_auxdata=lambda raw: None)


def tree_to_json(td: PyTreeDef):
    if td.node_type is None:
        return ["*"]
    kids = [tree_to_json(c) for c in td.children]
    name = _BUILTIN.get(td.node_type)
    if name == "dict":
        if not all(isinstance(k, str) or (type(k) is int) for k in td.aux):
            raise ExportError(f"funcgrad.export: dict keys {list(td.aux)!r} cannot be serialized (only str and int)")
        return ["dict", list(td.aux), kids]
    if name is not None:
        return [name, None, kids]
    reg = _by_type.get(td.node_type)
    if reg is None:
        raise ExportError(
            f"funcgrad.export: cannot serialize a pytree with a {td.node_type.__name__} node; register it with "
            "funcgrad.export.register_pytree_node_serialization (or register_namedtuple_serialization)")
    raw = reg[1](td.aux)
    if not isinstance(raw, (bytes, bytearray)):
        raise TypeError(f"serialize_auxdata of {reg[0]!r} must return bytes, got {type(raw).__name__}")
    return ["custom", reg[0], bytes(raw).hex(), kids]


def tree_from_json(x) -> PyTreeDef:
    if x == ["*"]:
        return PyTreeDef(None, None, ())
    if not (isinstance(x, list) and len(x) in (3, 4) and isinstance(x[-1], list)):
        raise ExportError(f"funcgrad.export.deserialize: malformed pytree node {x!r:.80}")
    kids = tuple(tree_from_json(c) for c in x[-1])
    kind = x[0]
    if kind in ("tuple", "list", "None") and len(x) == 3 and x[1] is None and (kind != "None" or not kids):
        return PyTreeDef(_BUILTIN_TYPES[kind], None, kids)
    if kind == "dict" and len(x) == 3 and isinstance(x[1], list) and len(x[1]) == len(kids):
        keys = x[1]
        if all(isinstance(k, str) or type(k) is int for k in keys) and len(set(keys)) == len(keys):
            return PyTreeDef(dict, tuple(keys), kids)
    if kind == "custom" and len(x) == 4 and isinstance(x[1], str) and isinstance(x[2], str):
        reg = _by_name.get(x[1])
        if reg is None:
            raise ExportError(
                f"funcgrad.export.deserialize: the blob uses the pytree node {x[1]!r}; register it with "
                "funcgrad.export.register_pytree_node_serialization before deserializing")
        return PyTreeDef(reg[0], reg[1](bytes.fromhex(x[2])), kids)
    raise ExportError(f"funcgrad.export.deserialize: malformed pytree node {x!r:.80}")


def leaf_paths(td: PyTreeDef, root: str = "") -> list[str]:
    """A readable path per leaf: ``args[0]``, ``kwargs['w']``, ``[1]['b']``."""
    out: list[str] = []
    stack = [(td, root)]
    while stack:
        node, path = stack.pop()
        if node.node_type is None:
            out.append(path or "the argument")
            continue
        if node.node_type is dict:
            labels = [f"{path}[{k!r}]" for k in node.aux]
        else:
            labels = [f"{path}[{i}]" for i in range(len(node.children))]
        stack.extend(reversed(list(zip(node.children, labels))))
    return out


def args_paths(in_tree: PyTreeDef) -> list[str]:
    """Leaf paths of an ``(args, kwargs)`` structure: ``args[0]``, ``kwargs['y']``."""
    if in_tree.node_type is tuple and len(in_tree.children) == 2:
        return leaf_paths(in_tree.children[0], "args") + leaf_paths(in_tree.children[1], "kwargs")
    return leaf_paths(in_tree)


__all__ = ["register_pytree_node_serialization", "register_namedtuple_serialization"]
