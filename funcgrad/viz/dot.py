"""A jaxpr as a Graphviz graph: nodes, edges and clusters, then DOT text.

One node per equation (its primitive and key params), per input, constant, literal
use and output; one edge per value an equation reads or a program returns, labelled
with the value's type (``f64[3,4]``). A higher-order equation (cond, while, scan,
jit_call, custom rules: ``Primitive.jaxpr_params``) sits in a cluster with one
sub-cluster per sub-jaxpr, drawn the same way; dashed edges lead from the equation to
each sub-jaxpr's inputs. Variable names are those of ``str(jaxpr)``.

The builder keeps the structure it emits (``nodes``, ``edges``, ``clusters``), so the
picture can be checked without parsing DOT.
"""
from __future__ import annotations

from typing import NamedTuple

from funcgrad.core.ir import ClosedJaxpr, Jaxpr, JaxprPrinter, Literal

FONT = "Helvetica"
# kind -> DOT attributes. Inputs, outputs and constants differ in shape *and* colour;
# forward and backward equations differ in colour (see ``phases``).
STYLE = {
    "input": 'shape=invhouse style=filled fillcolor="#cfe2f3"',
    "output": 'shape=house style=filled fillcolor="#d9ead3"',
    "constant": 'shape=cylinder style=filled fillcolor="#e6e6e6"',
    "literal": 'shape=plaintext fontcolor="#555555"',
    "forward": 'shape=box style="rounded,filled" fillcolor="#fff2cc"',
    "backward": 'shape=box style="rounded,filled" fillcolor="#f4cccc" color="#990000"',
}
SUB_STYLE = {"input": "dashed", "output": "dashed", "constant": "dashed"}
BACKWARD_CLUSTER = 'bgcolor="#fbeeee"'


class Node(NamedTuple):
    id: str
    kind: str  # input | output | constant | literal | eqn
    label: str
    cluster: str | None  # innermost cluster id, None at top level
    phase: str | None = None  # eqns: "forward" / "backward"; None when not a grad program
    eqn: object = None


class Edge(NamedTuple):
    src: str
    dst: str
    label: str
    kind: str = "value"  # "value": a tensor read or returned; "sub": into a sub-jaxpr's input


class Cluster(NamedTuple):
    id: str
    label: str
    parent: str | None
    backward: bool = False


def quote(text: str) -> str:
    """A DOT double-quoted string (newlines become ``\\n`` line breaks)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def param_text(printer: JaxprPrinter, value, limit: int) -> str:
    text = " ".join(printer.param(value, 0).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class DotBuilder:
    """Accumulates nodes, edges and clusters; ``text()`` is the DOT source.

    ``backward(eqn) -> bool`` (or None: not a grad program) colours equations;
    ``show_params`` puts the key params under each primitive's name, each cut at
    ``param_chars`` characters."""

    def __init__(self, name: str, backward=None, show_params: bool = True, param_chars: int = 40,
                 rankdir: str = "TB", note: str = ""):
        self.name, self.backward, self.note = name, backward, note
        self.show_params, self.param_chars, self.rankdir = show_params, param_chars, rankdir
        self.printer = JaxprPrinter()
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self.clusters: dict[str, Cluster] = {}
        self._count = 0

    # -- primitives of the picture ---------------------------------------------------------
    def node(self, kind: str, label: str, cluster, phase=None, eqn=None) -> str:
        nid = f"n{self._count}"
        self._count += 1
        self.nodes[nid] = Node(nid, kind, label, cluster, phase, eqn)
        return nid

    def edge(self, src: str, dst: str, aval, kind: str = "value") -> None:
        self.edges.append(Edge(src, dst, aval.str_short(), kind))

    def cluster(self, label: str, parent, backward: bool = False) -> str:
        cid = f"cluster_{len(self.clusters)}"
        self.clusters[cid] = Cluster(cid, label, parent, backward)
        return cid

    def eqn_label(self, e) -> str:
        lines = [e.primitive.name]
        if self.show_params:
            subs = set(e.primitive.jaxpr_params)
            lines += [f"{k}={param_text(self.printer, e.params[k], self.param_chars)}"
                      for k in sorted(e.params) if k not in subs]
        return "\n".join(lines)

    def phase_of(self, e, inherited: str | None) -> str | None:
        if self.backward is None:
            return None
        if inherited == "backward" or self.backward(e):
            return "backward"
        return "forward"

    # -- programs --------------------------------------------------------------------------
    def program(self, jaxpr: Jaxpr, cluster=None, sub: bool = False, phase=None, eqns=None) -> list[str]:
        """Draw ``jaxpr`` (inside ``cluster``): its inputs, constants, equations (``eqns``:
        a callback drawing them instead, for the fused picture) and outputs. Returns the
        input node ids (sub-jaxprs are linked to their equation through them)."""
        if not sub:  # number the variables as ``str(jaxpr)`` does (sub-jaxprs included)
            self.printer.jaxpr(jaxpr)
        env: dict[int, str] = {}
        ins = []
        for v in jaxpr.constvars:
            env[id(v)] = self.node("constant", self.printer.binder(v), cluster)
        for v in jaxpr.invars:
            env[id(v)] = self.node("input", self.printer.binder(v), cluster)
            ins.append(env[id(v)])
        if eqns is None:
            for e in jaxpr.eqns:
                self.equation(e, env, cluster, phase)
        else:
            eqns(env)
        for k, v in enumerate(jaxpr.outvars):
            out = self.node("output", f"{'result' if sub else 'out'} {k}: {v.aval.str_short()}", cluster)
            self.edge(self.source(v, env, cluster), out, v.aval)
        return ins

    def source(self, a, env, cluster) -> str:
        """The node a value comes from (a literal gets a node of its own at each use)."""
        if isinstance(a, Literal):
            return self.node("literal", self.printer.name(a).split(":")[0], cluster)
        try:
            return env[id(a)]
        except KeyError:
            raise ValueError(f"draw: the jaxpr reads {self.printer.name(a)}:{a.aval.str_short()} "
                             "before it is bound (not a well-formed jaxpr)") from None

    def equation(self, e, env, cluster, inherited=None, local=None, bind=None) -> str:
        """Draw equation ``e``: its node, an edge per input, its sub-jaxprs as clusters.
        Inputs are looked up in ``local`` first (the fused picture's per-nest copies of
        recomputed values), outputs are bound in ``bind`` (default ``env``)."""
        phase = self.phase_of(e, inherited)
        subs = [(k, e.params[k]) for k in e.primitive.jaxpr_params]
        where = cluster
        if subs:
            title = e.primitive.name + (f" {e.params['name']}" if isinstance(e.params.get("name"), str) else "")
            where = self.cluster(title, cluster, phase == "backward")
        nid = self.node("eqn", self.eqn_label(e), where, phase, e)
        for a in e.inputs:
            src = (local or {}).get(id(a)) or self.source(a, env, where)
            self.edge(src, nid, a.aval)
        for pname, value in subs:
            parts = value if isinstance(value, tuple) else (value,)
            for k, part in enumerate(parts):
                jaxpr = part.jaxpr if isinstance(part, ClosedJaxpr) else part
                label = f"{pname}[{k}]" if isinstance(value, tuple) else pname
                sub_id = self.cluster(label, where, phase == "backward")
                for v_in, node_in in zip(jaxpr.invars, self.program(jaxpr, sub_id, True, phase)):
                    self.edge(nid, node_in, v_in.aval, kind="sub")
        for v in e.outputs:
            (env if bind is None else bind)[id(v)] = nid
        return nid

    def fused(self, jaxpr: Jaxpr, p) -> None:
        """Draw the program jit compiles: ``jaxpr`` (simplified) grouped into one cluster
        per loop nest of the fusion plan ``p`` (``lowering.compiler.plan``), numbered as
        ``fusion_text`` numbers them. A cheap value fused into several nests is recomputed
        in each, so it gets a node in each."""
        heads, fused_into = loop_nests(jaxpr, p)

        def eqns(env):
            for k, h in enumerate(heads, 1):
                cid = self.cluster(f"nest {k}: {h.primitive.name}", None)
                local: dict = {}
                for m in fused_into.get(id(h.outputs[0]), []) if h.outputs else []:
                    self.equation(m, env, cid, local=local, bind=local)
                self.equation(h, env, cid, local=local)
            if fused_into.get(END):  # (values a caller reads after the last nest)
                cid, local = self.cluster("after the last nest", None), {}
                for m in fused_into[END]:
                    self.equation(m, env, cid, local=local, bind=local)
                env.update(local)

        self.program(jaxpr, eqns=eqns)

    # -- DOT -------------------------------------------------------------------------------
    def text(self) -> str:
        head = [f"digraph {quote(self.name)} {{",
                f'  graph [rankdir={self.rankdir} fontname="{FONT}" labelloc=t label={quote(self.title())}];',
                f'  node [fontname="{FONT}" fontsize=11];',
                f'  edge [fontname="{FONT}" fontsize=9];']
        members: dict = {}
        for n in self.nodes.values():
            members.setdefault(n.cluster, []).append(n)
        children: dict = {}
        for c in self.clusters.values():
            children.setdefault(c.parent, []).append(c)
        body: list[str] = []
        stack = [(None, 1, False)]  # iterative: (cluster id or None, depth, closing?)
        while stack:
            cid, depth, closing = stack.pop()
            pad = "  " * depth
            if closing:
                body.append(pad[:-2] + "}")
                continue
            if cid is not None:
                c = self.clusters[cid]
                extra = f" {BACKWARD_CLUSTER}" if c.backward else ""
                body.append(f"{pad[:-2]}subgraph {cid} {{")
                body.append(f'{pad}graph [label={quote(c.label)} style="rounded,dashed"{extra}];')
                stack.append((cid, depth, True))
            for n in members.get(cid, []):
                body.append(pad + self.node_text(n))
            for c in reversed(children.get(cid, [])):
                stack.append((c.id, depth + 1, False))
        for e in self.edges:
            style = " style=dashed arrowhead=none color=\"#888888\"" if e.kind == "sub" else ""
            body.append(f"  {e.src} -> {e.dst} [label={quote(e.label)}{style}];")
        return "\n".join(head + body + ["}"]) + "\n"

    def node_text(self, n: Node) -> str:
        style = STYLE[n.phase or "forward"] if n.kind == "eqn" else STYLE[n.kind]
        if n.cluster is not None and n.kind in SUB_STYLE:
            style = style.replace("style=filled", 'style="filled,dashed"')
        tip = f" tooltip={quote(self.eqn_text(n.eqn))}" if n.eqn is not None else ""
        return f"{n.id} [label={quote(n.label)} {style}{tip}];"

    def eqn_text(self, e) -> str:
        """The equation as ``str(jaxpr)`` prints it; a higher-order one without its
        sub-jaxprs (the clusters show them)."""
        if not e.primitive.jaxpr_params:
            return self.printer.eqn(e, 0)
        outs = " ".join(self.printer.binder(v) for v in e.outputs) or "_"
        return f"{outs} = {e.primitive.name} {' '.join(self.printer.name(a) for a in e.inputs)}"

    def title(self) -> str:
        parts = [self.name]
        if self.backward is not None:
            parts.append("forward: yellow, backward (reverse-mode walker): red")
        if self.note:
            parts.append(self.note)
        return "\n".join(parts)


END = ("end",)  # the fusion plan's root for values read after the last nest


def loop_nests(jaxpr: Jaxpr, p) -> tuple[list, dict]:
    """(the equations that head a loop nest -- those whose result gets a buffer, in
    program order --, root id -> the equations fused into that nest, in program order),
    as ``lowering.compiler.fusion_text`` groups them."""
    heads, fused_into = [], {}
    for e in jaxpr.eqns:
        if e.outputs and id(e.outputs[0]) not in p.materialized:
            for r in p.roots.get(id(e.outputs[0]), ()):
                fused_into.setdefault(r, []).append(e)
        else:
            heads.append(e)
    return heads, fused_into
