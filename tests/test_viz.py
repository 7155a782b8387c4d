"""Program pictures (``fg.draw``, ``Lowered.draw``), checked structurally on the DOT text:
every equation a node, every edge labelled with its value's type, a cluster per
sub-jaxpr, inputs/outputs/constants marked, forward/backward marking of a grad program,
the fused picture's clusters equal to the fusion plan. Rendering is checked only when
the optional graphviz extra is installed."""
import re

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.ir import JaxprPrinter, Literal
from funcgrad.viz import Graph, GraphvizNotFound, draw_jaxpr

NODE = re.compile(r'^\s*(n\d+) \[label="((?:[^"\\]|\\.)*)" (.*)\];$')
EDGE = re.compile(r'^\s*(n\d+) -> (n\d+) \[label="((?:[^"\\]|\\.)*)"(.*)\];$')


def parse(dot: str):
    """{node id: (label, attrs, enclosing cluster ids)}, [(src, dst, label, attrs)], {cluster: label}."""
    nodes, edges, clusters, open_ = {}, [], {}, []
    for line in dot.splitlines():
        if m := re.match(r"^\s*subgraph (cluster_\d+) \{$", line):
            open_.append(m.group(1))
        elif open_ and (m := re.match(r'^\s*graph \[label="((?:[^"\\]|\\.)*)"', line)):
            clusters[open_[-1]] = m.group(1)
        elif re.match(r"^\s*\}$", line) and open_:
            open_.pop()
        elif m := NODE.match(line):
            nodes[m.group(1)] = (m.group(2).replace("\\n", "\n"), m.group(3), tuple(open_))
        elif m := EDGE.match(line):
            edges.append((m.group(1), m.group(2), m.group(3), m.group(4)))
    return nodes, edges, clusters


def all_eqns(jaxpr):
    """Every equation, sub-jaxprs included (iteratively)."""
    out, todo = [], [jaxpr]
    while todo:
        j = todo.pop()
        for e in j.eqns:
            out.append(e)
            for k in e.primitive.jaxpr_params:
                v = e.params[k]
                todo += [c.jaxpr for c in (v if isinstance(v, tuple) else (v,))]
    return out


def check_structure(g: Graph):
    """The DOT text agrees with the jaxpr the picture claims to show, at every level."""
    nodes, edges, clusters = parse(g.dot)
    assert set(nodes) == set(g.nodes)
    by_eqn = {id(n.eqn.outputs): i for i, n in g.nodes.items() if n.kind == "eqn"}
    eqns = all_eqns(g.jaxpr.jaxpr if hasattr(g.jaxpr, "jaxpr") else g.jaxpr)
    assert {id(e.outputs) for e in eqns} <= set(by_eqn)  # every equation is a node
    value_edges = {}
    for src, dst, label, attrs in edges:
        value_edges.setdefault(dst, []).append((src, label, "dashed" in attrs))
    for e in eqns:
        nid = by_eqn[id(e.outputs)]
        assert nodes[nid][0].split("\n")[0] == e.primitive.name
        into = [(s, lab) for s, lab, sub in value_edges.get(nid, []) if not sub]
        # one edge per operand, labelled with the operand's type, from where it is made
        assert [lab for _, lab in into] == [a.aval.str_short() for a in e.inputs]
        for (src, _), a in zip(into, e.inputs):
            kind = g.nodes[src].kind
            assert kind == ("literal" if isinstance(a, Literal) else kind) and kind != "output"
    # every sub-jaxpr is a cluster (nested in its equation's cluster)
    n_subs = sum(len(v) if isinstance(v, tuple) else 1
                 for e in eqns for v in (e.params[k] for k in e.primitive.jaxpr_params))
    n_higher = sum(1 for e in eqns if e.primitive.jaxpr_params)
    return nodes, edges, clusters, n_subs, n_higher


def kinds(g, kind, top=True):
    return [n for n in g.nodes.values() if n.kind == kind and (n.cluster is None or not top)]


def test_every_equation_edge_input_output_and_constant():
    c = np.arange(3.0)

    def f(x, y):
        return fnp.sin(x) * c + y * 2.0, fnp.sum(x)

    g = fg.draw(f)(np.ones(3), 1.5)
    nodes, edges, clusters, n_subs, _ = check_structure(g)
    assert str(g) == g.dot and g.dot.startswith('digraph "f" {')
    closed = fg.make_jaxpr(f)(np.ones(3), 1.5)
    printer = JaxprPrinter()
    printer.jaxpr(closed.jaxpr)
    assert [n.label for n in kinds(g, "input")] == [printer.binder(v) for v in closed.jaxpr.invars]
    assert [n.label for n in kinds(g, "constant")] == [printer.binder(v) for v in closed.jaxpr.constvars]
    assert [n.label for n in kinds(g, "output")] == ["out 0: f64[3]", "out 1: f64[]"]
    assert [n.label for n in kinds(g, "literal")] == ["2.0"]
    # shapes and colours differ by kind
    assert {nodes[n.id][1].split()[0] for n in kinds(g, "input")} == {"shape=invhouse"}
    assert {nodes[n.id][1].split()[0] for n in kinds(g, "output")} == {"shape=house"}
    assert {nodes[n.id][1].split()[0] for n in kinds(g, "constant")} == {"shape=cylinder"}
    # each output is fed by one edge labelled with its type; no phase outside grad
    outs = {n.id for n in kinds(g, "output")}
    assert sorted(lab for _, d, lab, _ in edges if d in outs) == ["f64[3]", "f64[]"]
    assert all(n.phase is None for n in g.nodes.values()) and clusters == {} and n_subs == 0
    assert f"{len(closed.jaxpr.eqns)} equations, 0 clusters" in repr(g)


def test_clusters_for_control_flow_and_jit_calls():
    def body(i, c):
        return lax.cond(c.sum() > 0, lambda v: v * 0.5, fnp.sin, c)

    @fg.jit
    def f(x):
        y = lax.fori_loop(0, 3, body, x)
        z = lax.while_loop(lambda v: v[0] < 10.0, lambda v: v + 1.0, y)
        ys = lax.scan(lambda carry, xi: (carry + xi, carry * xi), 0.0, z)[1]
        return lax.switch(fnp.argmax(ys), [fnp.cos, fnp.exp, fnp.tanh], ys)

    g = fg.draw(f)(np.ones(3))
    nodes, edges, clusters, n_subs, n_higher = check_structure(g)
    assert len(clusters) == n_subs + n_higher  # a cluster per higher-order equation and per sub-jaxpr
    labels = sorted(clusters.values())
    for want in ["jit_call f", "cond", "while", "scan", "branches[0]", "branches[2]", "cond_jaxpr", "body_jaxpr"]:
        assert want in labels, (want, labels)
    # a sub-jaxpr's inputs sit in its cluster and are reached by dashed edges from the equation
    sub_inputs = [n for n in g.nodes.values() if n.kind == "input" and n.cluster is not None]
    assert sub_inputs and all(nodes[n.id][2] for n in sub_inputs)
    dashed = {d for s, d, lab, attrs in edges if "dashed" in attrs}
    assert {n.id for n in sub_inputs} == dashed
    assert all(g.nodes[n.id].label.split(":")[1] == lab for s, d, lab, attrs in edges
               if "dashed" in attrs for n in [g.nodes[d]])


def test_grad_program_marks_forward_and_backward():
    def mlp(params, x):
        w1, w2 = params
        return fnp.sum(fnp.tanh(w1 @ x) @ w2 ** 2)

    params = (np.ones((4, 3)), np.ones(4))
    g = fg.draw(fg.grad(mlp))(params, np.ones(3))
    check_structure(g)
    phases = [n.phase for n in g.nodes.values() if n.kind == "eqn"]
    eqn_nodes = [n for n in g.nodes.values() if n.kind == "eqn"]
    # the primal computation is forward; everything after the seed is backward; no interleaving
    assert set(phases) == {"forward", "backward"}
    k = phases.index("backward")
    assert all(p == "backward" for p in phases[k:])
    forward = {n.eqn.primitive.name for n in eqn_nodes[:k]}
    assert {"dot_general", "tanh", "integer_pow", "reduce_sum"} <= forward
    # the gradient outputs are computed by backward equations
    outs = {n.id for n in kinds(g, "output")}
    assert all(g.nodes[s].phase == "backward" for s, d, _, _ in parse(g.dot)[1] if d in outs)
    assert 'fillcolor="#f4cccc"' in g.dot and "backward" in g.dot.splitlines()[1]
    # a program with no reverse pass gets no phase at all
    assert all(n.phase is None for n in fg.draw(fg.jacfwd(fnp.sin))(1.0).nodes.values())


def test_grad_through_jit_and_cond_marks_the_transposed_bodies():
    @fg.jit
    def h(x):
        return lax.cond(x.sum() > 0, fnp.sin, lambda v: v * 2.0, x)

    g = fg.draw(fg.grad(lambda x: h(x).sum()))(np.ones(3))
    nodes, edges, clusters, _, _ = check_structure(g)
    back = {c.label for c in g.clusters.values() if c.backward}
    assert "jit_call transpose_h_lin" in back
    # every equation inside a backward cluster is backward
    for n in g.nodes.values():
        if n.kind == "eqn" and n.cluster is not None and g.clusters[n.cluster].backward:
            assert n.phase == "backward"
    assert any(n.phase == "forward" and n.eqn.primitive.name == "jit_call" for n in g.nodes.values() if n.eqn)


def test_jit_of_grad_and_vmap():
    f = fg.jit(fg.grad(lambda x: fnp.sum(fnp.exp(x) * x)))
    g = fg.draw(f)(np.ones(2))
    check_structure(g)
    inner = [n for n in g.nodes.values() if n.kind == "eqn" and n.cluster is not None]
    assert {n.phase for n in inner} == {"forward", "backward"}
    gv = fg.draw(fg.vmap(lambda x: fnp.dot(x, x)))(np.ones((5, 3)))
    check_structure(gv)
    assert [n.label for n in kinds(gv, "input")] == ["a:f64[5,3]"]


def test_fused_picture_matches_the_fusion_plan():
    from funcgrad.lowering.compiler import fusion_text, plan

    def f(x, w):
        y = fnp.tanh(w @ x) * 2.0 + fnp.sum(x)
        return fnp.exp(y) / fnp.sum(fnp.exp(y)), y

    lowered = fg.jit(f).lower(np.ones(3), np.ones((4, 3)))
    g = lowered.draw()
    nodes, edges, clusters, _, _ = check_structure(g)
    jaxpr = lowered._exe.jaxpr
    text = fusion_text(jaxpr, plan(jaxpr))
    # fusion_text: "nest k: prim -> outs" then one indented line per equation of the nest
    want, cur = {}, None
    for line in text.splitlines():
        if m := re.match(r"nest (\d+): (\S+) ->", line):
            cur = want[f"nest {m.group(1)}: {m.group(2)}"] = []
        elif line.startswith("    ") and cur is not None:
            cur.append(line.strip())
        else:
            cur = None
    got = {}
    for n in g.nodes.values():
        if n.kind == "eqn":
            got.setdefault(g.clusters[n.cluster].label, []).append(g.nodes[n.id])
    assert sorted(got) == sorted(want)
    for label, members in got.items():
        printer = JaxprPrinter()
        printer.jaxpr(jaxpr)
        assert [printer.eqn(m.eqn, 0).strip() for m in members] == want[label], label
    # a value recomputed in two nests has a node in each
    assert len([n for n in g.nodes.values() if n.kind == "eqn"]) >= len(jaxpr.eqns)


def test_options_and_errors():
    g = fg.draw(fnp.sin, rankdir="LR", show_params=False, name="sine")(np.ones(2))
    assert "rankdir=LR" in g.dot and g.dot.startswith('digraph "sine"')
    g2 = fg.draw(lambda x: fnp.sum(x, axis=0))(np.ones((2, 2)))
    assert "axes=(0,)" in g2.dot
    assert 'label="reduce_sum"' in fg.draw(lambda x: fnp.sum(x, axis=0), show_params=False)(np.ones((2, 2))).dot
    assert 'dimension_numbers=(((1,),…"' in fg.draw(lambda x: x @ x, param_chars=8)(np.ones((2, 2))).dot
    with pytest.raises(ValueError, match="draw: rankdir must be one of"):
        fg.draw(fnp.sin, rankdir="up")
    with pytest.raises(ValueError, match="draw: param_chars"):
        fg.draw(fnp.sin, param_chars=0)
    with pytest.raises(TypeError, match="draw: expected a function, got int"):
        fg.draw(3)
    with pytest.raises(TypeError, match=r"draw\(sin\): pass arguments positionally.*x"):
        fg.draw(fnp.sin)(x=np.ones(2))
    with pytest.raises(TypeError, match="draw_jaxpr: argument jaxpr must be a ClosedJaxpr or Jaxpr, got str"):
        draw_jaxpr("x")
    closed = fg.make_jaxpr(lambda x: x * 2.0)(1.0)
    check_structure(draw_jaxpr(closed))
    assert draw_jaxpr(closed.jaxpr).dot == draw_jaxpr(closed).dot
    # static arguments are values, not inputs
    gs = fg.draw(lambda x, n: x * n, static_argnums=1)(np.ones(2), 3)
    assert [n.label for n in kinds(gs, "input")] == ["a:f64[2]"]


def test_render_to_dot_file_without_graphviz(tmp_path):
    g = fg.draw(fnp.cos)(1.0)
    path = g.render(tmp_path / "cos.dot")
    assert open(path).read() == g.dot
    with pytest.raises(ValueError, match="Graph.render: cannot tell the format"):
        g.render(tmp_path / "noext")
    bundle = g._repr_mimebundle_()
    assert bundle["text/plain"] == g.dot


def test_missing_graphviz_is_a_clear_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz -> ImportError
    g = fg.draw(fnp.cos)(1.0)
    with pytest.raises(GraphvizNotFound, match=r"Graph.svg\(\).*pip install 'funcgrad\[viz\]'"):
        g.svg()
    assert isinstance(GraphvizNotFound("x"), ImportError)
    assert g._repr_svg_() is None
    assert g._repr_mimebundle_() == {"text/plain": g.dot}


def test_render_with_graphviz(tmp_path):
    graphviz = pytest.importorskip("graphviz")  # the optional extra; skipped without it
    g = fg.draw(fg.grad(lambda x: lax.cond(x > 0, fnp.sin, fnp.cos, x)))(0.5)
    try:
        svg = g.svg()
    except GraphvizNotFound:
        pytest.skip("graphviz package installed but not the dot program")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "branches[0]" in svg
    assert g.png()[:8] == b"\x89PNG\r\n\x1a\n"
    assert open(g.render(tmp_path / "g.svg")).read().count("<svg") == 1
    assert "image/svg+xml" in g._repr_mimebundle_()
    assert graphviz.Source(g.dot).source == g.dot


def test_custom_rules_and_checkpoint_are_clusters():
    @fg.custom_jvp
    def softplus(x):
        return fnp.log1p(fnp.exp(x))

    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] / (1.0 + fnp.exp(-p[0]))))

    def f(x):
        return fnp.sum(fg.checkpoint(lambda v: fnp.sin(v) * v)(softplus(x)))

    g = fg.draw(f)(np.ones(3))
    _, _, clusters, n_subs, n_higher = check_structure(g)
    assert len(clusters) == n_subs + n_higher
    assert {"custom_jvp_call", "checkpoint_call"} <= {lab.split()[0] for lab in clusters.values()}
    gg = fg.draw(fg.grad(f))(np.ones(3))
    check_structure(gg)
    assert {n.phase for n in gg.nodes.values() if n.kind == "eqn"} == {"forward", "backward"}


def test_a_failing_trace_leaves_no_observer_behind():
    from funcgrad.transforms.transpose import walk_observers

    def bad(x):
        if x > 0:  # Python control flow on a traced value
            return x
        return -x

    with pytest.raises(fg.errors.TracerBoolConversionError):
        fg.draw(fg.grad(bad))(1.0)
    assert walk_observers == []
    # and eager grad is unaffected afterwards
    np.testing.assert_allclose(fg.grad(bad)(2.0), 1.0)
