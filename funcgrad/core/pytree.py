"""Pytrees: nested containers (tuple, list, dict, None, namedtuple, registered classes,
dataclasses) flattened to a list of leaves plus a hashable ``PyTreeDef``.

dict children are ordered by sorted key, as in JAX, so the structure does not depend
on insertion order. Flattening is iterative (no recursion limit on deep trees).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, NamedTuple


class _NodeType(NamedTuple):
    to_iterable: Callable  # node -> (children, aux_data)
    from_iterable: Callable  # (aux_data, children) -> node
    # node -> (children, aux_data, keys): the key of each child in a key path (JAX's
    # ``flatten_with_keys``); None: children are keyed by ``FlattenedIndexKey(i)``.
    with_keys: Callable | None = None


_registry: dict[type, _NodeType] = {}


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Register ``nodetype`` as a pytree node.

    ``flatten_func(node) -> (children, aux_data)``; ``unflatten_func(aux_data, children)
    -> node``. ``aux_data`` must be hashable and comparable. ``flatten_with_keys_func(node)
    -> (((key, child), ...), aux_data)`` names the children in key paths (optional).

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"register_pytree_node: nodetype must be a class, got {nodetype!r}")
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    with_keys = None
    if flatten_with_keys_func is not None:
        def with_keys(node):
            pairs, aux = flatten_with_keys_func(node)
            pairs = list(pairs)
            return [c for _, c in pairs], aux, [k for k, _ in pairs]
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func, with_keys)


def register_dataclass(nodetype=None, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass as a pytree node (JAX's signature; usable as a decorator).

    ``data_fields`` are children (leaves or subtrees), ``meta_fields`` static structure
    (hashable). Give both, or neither: then fields marked
    ``dataclasses.field(metadata=dict(static=True))`` are meta and the others data. Giving
    one alone takes the remaining init fields as the other. ``drop_fields`` are fields
    left out of both (they must not be needed by ``__init__``). Key paths name children
    with ``GetAttrKey(field)``.

    >>> import dataclasses
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: object
    ...     act: str = dataclasses.field(default="relu", metadata=dict(static=True))
    >>> tree_leaves(Layer(w=fnp.ones(2)))
    [Array([1., 1.])]
    >>> fg.grad(lambda layer: fnp.sum(layer.w ** 2))(Layer(w=fnp.array([1.0, 2.0])))
    Layer(w=Array([2., 4.]), act='relu')
    """

    def register(cls):
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise TypeError(f"register_dataclass: nodetype {getattr(cls, '__name__', cls)!r} is not a dataclass")
        fields = [f for f in dataclasses.fields(cls) if f.init and f.name not in drop_fields]
        names = [f.name for f in fields]
        if data_fields is None and meta_fields is None:
            meta = tuple(f.name for f in fields if f.metadata.get("static", False))
            data = tuple(n for n in names if n not in meta)
        else:
            meta = tuple(meta_fields) if meta_fields is not None else ()
            data = tuple(data_fields) if data_fields is not None else tuple(n for n in names if n not in meta)
            if meta_fields is None:
                meta = tuple(n for n in names if n not in data)
        unknown = set(data + meta) - set(names)
        if unknown:
            raise ValueError(f"register_dataclass: {cls.__name__} has no init fields {sorted(unknown)}")
        missing = set(names) - set(data + meta)
        if missing:
            raise ValueError(f"register_dataclass: fields {sorted(missing)} of {cls.__name__} are neither "
                             "data_fields nor meta_fields (name them, or list them in drop_fields)")

        def flatten(obj):
            return [getattr(obj, n) for n in data], tuple(getattr(obj, n) for n in meta)

        def flatten_with_keys(obj):
            return [(GetAttrKey(n), getattr(obj, n)) for n in data], tuple(getattr(obj, n) for n in meta)

        def unflatten(aux, children):
            return cls(**dict(zip(data, children)), **dict(zip(meta, aux)))

        register_pytree_node(cls, flatten, unflatten, flatten_with_keys)
        return cls

    return register if nodetype is None else register(nodetype)


def _dict_flatten(d):
    keys = sorted(d)
    return [d[k] for k in keys], tuple(keys)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields") and type(x) is not tuple


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda l: (l, None), lambda _, c: list(c))
register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)))
register_pytree_node(type(None), lambda n: ((), None), lambda _, c: None)

_NAMEDTUPLE = _NodeType(lambda t: (tuple(t), None), None)


def _node_of(x, is_leaf):
    """(node_type_key, children, aux) for an internal node, or None for a leaf."""
    if is_leaf is not None and is_leaf(x):
        return None
    typ = type(x)
    nt = _registry.get(typ)
    if nt is not None:
        children, aux = nt.to_iterable(x)
        return typ, list(children), aux
    if _is_namedtuple(x):
        return typ, list(x), None
    return None


class PyTreeDef:
    """Hashable structure of a pytree: node type, aux data and child structures."""

    __slots__ = ("node_type", "aux", "children", "num_leaves", "_hash", "_order")

    def __init__(self, node_type, aux, children: tuple):
        self.node_type = node_type  # None for a leaf
        self.aux = aux
        self.children = children
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children)
        self._hash = None
        self._order = None

    # Walks below are iterative: a pytree may be nested deeper than Python's recursion
    # limit (a 10,000-deep list is a valid argument).
    def postorder(self) -> tuple:
        """The nodes of this structure, each after its children (iterative; kept: a
        structure is immutable, and ``tree_unflatten`` walks it on every call)."""
        if self._order is not None:
            return self._order
        out, stack = [], [(self, False)]
        while stack:
            td, expanded = stack.pop()
            if expanded or not td.children:
                out.append(td)
            else:
                stack.append((td, True))
                stack.extend((c, False) for c in reversed(td.children))
        self._order = out = tuple(out)
        return out

    @property
    def num_nodes(self) -> int:
        return len(self.postorder())

    def _key(self):
        return (self.node_type, self.aux, self.children)

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return False
        stack = [(self, other)]
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if a.node_type is not b.node_type and a.node_type != b.node_type:
                return False
            if a.num_leaves != b.num_leaves or len(a.children) != len(b.children) or a.aux != b.aux:
                return False
            stack.extend(zip(a.children, b.children))
        return True

    def __hash__(self):
        if self._hash is None:
            for td in self.postorder():  # children first: each hash is one tuple's
                if td._hash is None:
                    td._hash = hash((td.node_type, td.aux, tuple(c._hash for c in td.children)))
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self) -> str:
        shown: list = []  # (postorder: each node's children are the last strings shown)
        for td in self.postorder():
            n = len(td.children)
            kids = shown[len(shown) - n:] if n else []
            del shown[len(shown) - n:]
            inner, nt = ", ".join(kids), td.node_type
            if nt is None:
                text = "*"
            elif nt is tuple:
                text = f"({inner}{',' if n == 1 else ''})"
            elif nt is list:
                text = f"[{inner}]"
            elif nt is dict:
                text = "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(td.aux, kids)) + "}"
            elif nt is type(None):
                text = "None"
            else:
                text = f"{nt.__name__}[{td.aux!r}]({inner})"
            shown.append(text)
        return shown[0]

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of ``tree`` at the leaf positions of this structure (``tree``
        must have this structure as a prefix: its nodes may continue below our leaves)."""
        out: list = []
        stack = [(self, tree)]
        while stack:
            td, x = stack.pop()
            if td.node_type is None:
                out.append(x)
                continue
            node = _node_of(x, None)
            if node is None or node[0] is not td.node_type or node[2] != td.aux or len(node[1]) != len(td.children):
                raise ValueError(
                    f"expected a {td._str()} node, got {_describe(x)} (a tree with {self} as a prefix "
                    "must have this node there)"
                )
            stack.extend(reversed(list(zip(td.children, node[1]))))
        return out


_LEAF = PyTreeDef(None, None, ())


_flat_defs: dict = {}  # (tuple or list, n) -> treedef of a flat sequence of n leaves


def _is_leaf_fast(x) -> bool:
    """True for a value that is certainly a leaf (not a registered node, not a tuple)."""
    return type(x) not in _registry and not isinstance(x, tuple)


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None):
    """Flatten ``tree`` into ``(leaves, treedef)``. Iterative, so depth is unbounded."""
    if is_leaf is None:
        # Fast paths for the shapes every transform flattens on each call: a single
        # array, and a tuple or list of arrays (e.g. positional arguments).
        typ = type(tree)
        if typ not in _registry and not isinstance(tree, tuple):
            return [tree], _LEAF
        if typ is tuple or typ is list:
            for x in tree:
                if not _is_leaf_fast(x):
                    break
            else:
                key = (typ, len(tree))
                td = _flat_defs.get(key)
                if td is None:
                    td = _flat_defs[key] = PyTreeDef(typ, None, (_LEAF,) * len(tree))
                return list(tree), td
    leaves: list = []
    # Post-order construction with an explicit stack of (node, state).
    stack: list = [(tree, None)]
    built: list = []
    while stack:
        x, pending = stack.pop()
        if pending is None:
            node = _node_of(x, is_leaf)
            if node is None:
                leaves.append(x)
                built.append(_LEAF)
                continue
            typ, children, aux = node
            stack.append((x, (typ, aux, len(children))))
            for c in reversed(children):
                stack.append((c, None))
        else:
            typ, aux, n = pending
            kids = tuple(built[len(built) - n:]) if n else ()
            del built[len(built) - n:]
            built.append(PyTreeDef(typ, aux, kids))
    return leaves, built[0]


def tree_unflatten(treedef: PyTreeDef, leaves):
    """Rebuild a pytree of structure ``treedef`` from ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(
            f"tree_unflatten: structure {treedef} expects {treedef.num_leaves} leaves, got {len(leaves)}"
        )
    node_type = treedef.node_type
    if node_type is None:
        return leaves[0]
    if node_type is tuple and _flat_defs.get((tuple, len(leaves))) is treedef:
        return tuple(leaves)  # a flat tuple (the treedef tree_flatten's fast path made)
    it = iter(leaves)
    built: list = []  # (postorder, iterative: a tree may be deeper than the recursion limit)
    for td in treedef.postorder():
        if td.node_type is None:
            built.append(next(it))
            continue
        n = len(td.children)
        children = built[len(built) - n:] if n else []
        del built[len(built) - n:]
        nt = _registry.get(td.node_type)
        built.append(nt.from_iterable(td.aux, children) if nt is not None else td.node_type(*children))  # (namedtuple)
    return built[0]


def tree_leaves(tree, is_leaf=None) -> list:
    """The leaves of ``tree`` in flattening order (``None`` is an empty subtree);
    ``is_leaf(node)`` may stop the descent early."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    """The ``PyTreeDef`` of ``tree``: its structure without the leaves."""
    return tree_flatten(tree, is_leaf)[1]


def _describe(x) -> str:
    return "a leaf" if _node_of(x, None) is None else f"a {type(x).__name__} node"


def _rest_leaves(fname, treedef, rest, is_leaf):
    """Leaves of each tree in ``rest`` matched to ``treedef``'s leaves: ``treedef`` must
    be a prefix of each (JAX's rule: a leaf of the first tree takes a whole subtree)."""
    out = []
    for i, r in enumerate(rest):
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            try:
                r_leaves = treedef.flatten_up_to(r)
            except ValueError as e:
                raise ValueError(f"{fname}: structures differ: tree {i + 1} is {r_def}, which does not have "
                                 f"the first tree's structure {treedef} as a prefix: {e}") from None
        out.append(r_leaves)
    return out


def tree_map(f: Callable, tree, *rest, is_leaf=None):
    """Apply ``f`` to corresponding leaves of ``tree`` and of each tree in ``rest`` (whose
    structures must have ``tree``'s as a prefix).

    >>> tree_map(lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)})
    {'x': 11, 'y': (22, 33)}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    all_leaves = [leaves] + _rest_leaves("tree_map", treedef, rest, is_leaf)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(*all_leaves)])


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` describes a single leaf."""
    return treedef.node_type is None


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the children of ``treedef``'s root node."""
    return list(treedef.children)


def tree_all(tree, *, is_leaf=None) -> bool:
    """Whether every leaf of ``tree`` is truthy."""
    return all(tree_leaves(tree, is_leaf))


_NO_INITIALIZER = object()


def tree_reduce(function: Callable, tree, initializer=_NO_INITIALIZER, is_leaf=None):
    """``functools.reduce(function, leaves)`` over the leaves of ``tree``.

    >>> tree_reduce(lambda a, b: a + b, [1, (2, 3)], 10)
    16
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        if not leaves:
            raise TypeError("tree_reduce: a tree with no leaves needs an initializer")
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose):
    """Turn a tree of structure ``outer`` of trees of structure ``inner`` into an
    ``inner`` tree of ``outer`` trees (``inner_treedef=None`` reads it off the first
    subtree).

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
        inner_treedef = tree_structure(subtrees[0]) if subtrees else _LEAF
    inner_n, outer_n = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_n * outer_n:
        raise TypeError(f"tree_transpose: the tree has structure {treedef} ({treedef.num_leaves} leaves), not an "
                        f"outer {outer_treedef} of inner {inner_treedef} ({outer_n} x {inner_n} leaves)")
    rows = [flat[i * inner_n:(i + 1) * inner_n] for i in range(outer_n)]
    return tree_unflatten(inner_treedef, [tree_unflatten(outer_treedef, col) for col in zip(*rows)])


# --- key paths: where each leaf sits ----------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The ``idx``-th element of a tuple or list (``[0]`` in ``keystr``)."""

    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """The entry ``key`` of a dict (``['a']`` in ``keystr``)."""

    key: Any

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The attribute ``name`` of a namedtuple or dataclass (``.name`` in ``keystr``)."""

    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """The ``key``-th child of a node registered without keys."""

    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def _simple_str(k) -> str:
    field = dataclasses.fields(k)[0].name if dataclasses.is_dataclass(k) else None
    return str(getattr(k, field)) if field else str(k)


def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``"[0]['w'].bias"``; ``simple=True`` drops the brackets and
    dots (``"0", "w", "bias"``, joined by ``separator``)."""
    return separator.join(_simple_str(k) if simple else str(k) for k in keys)


def _node_with_keys(x, is_leaf):
    """(children, keys) of an internal node, or None for a leaf."""
    node = _node_of(x, is_leaf)
    if node is None:
        return None
    typ, children, aux = node
    if typ is tuple or typ is list:
        return children, [SequenceKey(i) for i in range(len(children))]
    if typ is dict:
        return children, [DictKey(k) for k in aux]
    nt = _registry.get(typ)
    if nt is None:  # namedtuple
        return children, [GetAttrKey(f) for f in typ._fields]
    if nt.with_keys is not None:
        kids, _, keys = nt.with_keys(x)
        return list(kids), list(keys)
    return children, [FlattenedIndexKey(i) for i in range(len(children))]


def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], treedef)``: each leaf with the tuple of keys that
    leads to it from the root.

    >>> tree_flatten_with_path({"a": [1, 2]})[0]
    [((DictKey(key='a'), SequenceKey(idx=0)), 1), ((DictKey(key='a'), SequenceKey(idx=1)), 2)]
    """
    out = []
    stack = [((), tree)]
    while stack:
        path, x = stack.pop()
        node = _node_with_keys(x, is_leaf)
        if node is None:
            out.append((path, x))
            continue
        children, keys = node
        stack.extend((path + (k,), c) for k, c in zip(reversed(keys), reversed(children)))
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None) -> list:
    """``[(key_path, leaf), ...]``."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree, *rest, is_leaf=None):
    """Like ``tree_map``, with each leaf's key path as ``f``'s first argument."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    rest_leaves = _rest_leaves("tree_map_with_path", treedef, rest, is_leaf)
    return tree_unflatten(treedef, [f(p, x, *xs) for (p, x), *xs in zip(pairs, *rest_leaves)])


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable, unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Register a node whose children have keys: ``flatten_with_keys(node) -> (((key,
    child), ...), aux_data)``; ``flatten_func`` (faster, no keys) is derived if omitted."""
    if flatten_func is None:
        def flatten_func(node):
            pairs, aux = flatten_with_keys(node)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
    """Class decorator: register ``cls`` with its ``tree_flatten(self) -> (children,
    aux)`` method and ``tree_unflatten(cls, aux, children)`` classmethod."""
    register_pytree_node(cls, lambda node: node.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: like ``register_pytree_node_class``, with a
    ``tree_flatten_with_keys(self) -> (((key, child), ...), aux)`` method (and
    ``tree_flatten`` used when the class defines it)."""
    flatten = (lambda node: node.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda node: node.tree_flatten_with_keys(), cls.tree_unflatten, flatten)
    return cls


def node_of(x, is_leaf=None):
    """``(node type, children, aux_data)`` of an internal node of a pytree, or None for a leaf."""
    return _node_of(x, is_leaf)


def node_with_keys(x, is_leaf=None):
    """``(children, keys)`` of an internal node of a pytree, or None for a leaf."""
    return _node_with_keys(x, is_leaf)


def is_node_type(typ) -> bool:
    """Whether instances of ``typ`` are pytree nodes (registered classes and namedtuples)."""
    return typ in _registry or (isinstance(typ, type) and issubclass(typ, tuple) and hasattr(typ, "_fields"))
