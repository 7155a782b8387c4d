"""The named differential checks run on one generated program.

Each check compares two ways of computing the same thing and returns a ``Result``
(status ``pass``, ``mismatch``, ``internal`` or ``skip``, plus a one-line detail).
Crashes are not seen here: the runner executes checks in a worker process and notices
when it dies.
"""
from __future__ import annotations

import dataclasses
import os
import traceback
import warnings

import numpy as np

from . import ref
from .gen import BATCH, FG, NP, Program, literal

CHECKS = ("eager_vs_numpy", "jaxpr_vs_eager", "jit_vs_eager", "vmap_vs_loop", "grad_vs_jvp",
          "jvp_vs_fd", "jit_grad_vs_grad", "grad_jit_vs_grad")

# Exceptions that mean a bug in funcgrad when they come out of its own code (a typed
# error is how funcgrad rejects a program; these are not).
INTERNAL = (AssertionError, KeyError, IndexError, AttributeError, NameError,
            UnboundLocalError, RecursionError, ZeroDivisionError, StopIteration)
TOL_VALUE = 1e-12  # forward float64 values, relative and absolute
TOL_DERIV = 1e-10  # derivatives from differently ordered sums
TOL_F32 = (1e-5, 1e-6)
FD_STEPS = (1e-5, 1e-6)
FD_TOL, FD_STABLE, FD_ONE_SIDED = 1e-5, 1e-7, 1e-3


@dataclasses.dataclass
class Result:
    status: str  # pass | mismatch | internal | skip
    detail: str = ""


@dataclasses.dataclass
class Outcome:
    value: object = None
    exc: BaseException | None = None
    internal: bool = False
    where: str = ""

    @property
    def ok(self):
        return self.exc is None

    def describe(self):
        return f"{type(self.exc).__name__}: {str(self.exc).splitlines()[0] if str(self.exc) else ''}{self.where}"


_FUNCGRAD_DIR = None


def run(fn) -> Outcome:
    global _FUNCGRAD_DIR
    if _FUNCGRAD_DIR is None:
        import funcgrad
        _FUNCGRAD_DIR = os.path.dirname(os.path.abspath(funcgrad.__file__))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Outcome(fn())
    except Exception as e:  # noqa: BLE001 - every failure is an outcome to compare
        frames = traceback.extract_tb(e.__traceback__)
        inner = frames[-1] if frames else None
        inside = inner is not None and os.path.abspath(inner.filename).startswith(_FUNCGRAD_DIR)
        where = f" (at {os.path.relpath(inner.filename, os.path.dirname(_FUNCGRAD_DIR))}:{inner.lineno})" if inside else ""
        return Outcome(exc=e, internal=inside and isinstance(e, INTERNAL), where=where)


def leaves(value):
    if isinstance(value, (tuple, list)):
        return [np.asarray(v) for v in value]
    return [np.asarray(value)]


def compare(expected, got, tol=TOL_VALUE, loose=(), signed=()) -> str | None:
    """None when equal: same count, shapes and dtypes; values within tolerance (float32's
    for float32 values and for the outputs in ``loose``, computed through float32), NaN
    where NaN, infinities of the same sign, and for the outputs in ``signed`` (computed
    elementwise from -0.0 and its kin) zeros of the same sign."""
    e, g = leaves(expected), leaves(got)
    if len(e) != len(g):
        return f"{len(g)} outputs, expected {len(e)}"
    for k, (a, b) in enumerate(zip(e, g)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"output {k}: got {b.dtype.name}{list(b.shape)}, expected {a.dtype.name}{list(a.shape)}"
        if a.dtype.kind == "f":
            rtol, atol = (tol, tol) if a.dtype == np.float64 and k not in loose else TOL_F32
            close = np.isclose(b, a, rtol=rtol, atol=atol, equal_nan=True)
        else:
            close = a == b
        if k in signed and a.dtype.kind == "f" and np.all(close):
            close = ~((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b)))
        if not np.all(close):
            i = np.unravel_index(int(np.argmin(close)), a.shape) if a.ndim else ()
            return f"output {k}{list(i) if i else ''}: got {b[i]!r}, expected {a[i]!r} (max |diff| " \
                   f"{np.max(np.abs(b.astype(float) - a.astype(float))):.3g})"
    return None


def judge(expected: Outcome, got: Outcome, what: str, tol=TOL_VALUE, loose=(), signed=()) -> Result:
    for o in (got, expected):
        if not o.ok and o.internal:
            return Result("internal", o.describe())
    if expected.ok and got.ok:
        msg = compare(expected.value, got.value, tol, loose, signed)
        return Result("pass") if msg is None else Result("mismatch", f"{what}: {msg}")
    if not expected.ok and not got.ok:
        if type(expected.exc) is type(got.exc):
            return Result("skip", f"invalid program: {type(got.exc).__name__} on every path")
        return Result("mismatch", f"{what}: raises {got.describe()} vs {expected.describe()}")
    bad = got if not got.ok else expected
    side = what.split(" vs ")[0 if bad is got else 1]
    return Result("mismatch", f"{what}: only {side} raises {bad.describe()}")


class Context:
    """The program's functions, inputs and the results shared between checks."""

    def __init__(self, program: Program):
        import funcgrad as fg
        import funcgrad.numpy as fnp
        from funcgrad import lax

        self.p, self.fg = program, fg
        # Inputs are funcgrad values, as a JAX program's are jax arrays: a plain NumPy
        # array indexed by a traced value is invalid in both (funcgrad says to wrap it).
        self.inputs = [fnp.asarray(x) if type(x) is np.ndarray else x for x in program.inputs]
        ns = {"np": np, "fnp": fnp, "lax": lax, "fg": fg}
        ns.update({f"X{k}": v for k, v in enumerate(self.inputs)})
        exec(compile(program.source(FG) + program.loss_source(), f"<fuzz seed {program.seed}>", "exec"), ns)  # noqa: S102
        self.f, self.loss = ns["f"], ns["loss"]
        np_ns = {"np": np, "ref": ref}
        exec(compile(program.source(NP), f"<fuzz ref seed {program.seed}>", "exec"), np_ns)  # noqa: S102
        self.f_np = np_ns["f"]
        self.dargs = [self.inputs[k] for k in program.diff]
        self.argnums = tuple(range(len(self.dargs)))
        self.tangents = tangents_for(program)
        self._eager = self._grad = None
        self.loose = program.lowp_outputs()
        self.signed = program.signed_outputs()
        # Derivatives through float32 are compared to float32 accuracy.
        self.deriv_tol = TOL_DERIV if program.fd_meaningful else TOL_F32[0]
        self.deriv_loose = () if program.fd_meaningful else tuple(range(len(self.dargs)))

    @property
    def eager(self) -> Outcome:
        if self._eager is None:
            self._eager = run(lambda: self.f(*self.inputs))
        return self._eager

    @property
    def grad(self) -> Outcome:
        if self._grad is None:
            self._grad = run(lambda: self.fg.grad(self.loss, argnums=self.argnums)(*self.dargs))
        return self._grad

    def differentiable(self) -> str | None:
        if not self.p.loss_outputs:
            return "no float64 output depends on a float64 input"
        return None


def tangents_for(program: Program):
    """Random tangents, one per differentiable input (a Python float for a Python float)."""
    rng = np.random.default_rng(program.seed + 1)
    out = []
    for k in program.diff:
        t = np.round(rng.standard_normal(np.shape(program.inputs[k])), 3).astype(np.float64)
        out.append(float(t) if isinstance(program.inputs[k], float) else t)
    return out


def check_eager_vs_numpy(ctx: Context) -> Result:
    with np.errstate(all="ignore"):
        expected = run(lambda: ctx.f_np(*ctx.inputs))
    return judge(expected, ctx.eager, "eager vs numpy", loose=ctx.loose, signed=ctx.signed)


def check_jaxpr_vs_eager(ctx: Context) -> Result:
    def staged():
        closed = ctx.fg.make_jaxpr(ctx.f)(*ctx.inputs)
        ctx.fg.check_jaxpr(closed)
        return ctx.fg.eval_closed_jaxpr(closed, *ctx.inputs)

    return judge(ctx.eager, run(staged), "eval_jaxpr vs eager", loose=ctx.loose, signed=ctx.signed)


def check_jit_vs_eager(ctx: Context) -> Result:
    jitted = ctx.fg.jit(ctx.f)
    first = run(lambda: jitted(*ctx.inputs))
    result = judge(ctx.eager, first, "jit vs eager", loose=ctx.loose, signed=ctx.signed)
    if result.status == "pass":  # the cached executable must give the same answer again
        result = judge(first, run(lambda: jitted(*ctx.inputs)), "jit (cache hit) vs jit", signed=ctx.signed)
    if result.status == "pass":  # and so must a new jit of f, linked from the disk cache (when on)
        result = judge(first, run(lambda: ctx.fg.jit(ctx.f)(*ctx.inputs)), "jit (disk cache) vs jit",
                       signed=ctx.signed)
    return result


def check_vmap_vs_loop(ctx: Context) -> Result:
    batched = {k: ctx.fg.numpy.asarray(v) if type(v) is np.ndarray else v for k, v in ctx.p.batched.items()}
    in_axes = tuple(0 if k in batched else None for k in range(len(ctx.inputs)))
    args = [batched.get(k, x) for k, x in enumerate(ctx.inputs)]

    def loop():
        rows = [ctx.f(*[batched[k][b] if k in batched else x for k, x in enumerate(ctx.inputs)])
                for b in range(BATCH)]
        return [np.stack([np.asarray(r[j]) for r in rows]) for j in range(len(rows[0]))]

    return judge(run(loop), run(lambda: ctx.fg.vmap(ctx.f, in_axes=in_axes)(*args)), "vmap vs loop",
                 loose=ctx.loose, signed=ctx.signed)


def check_grad_vs_jvp(ctx: Context) -> Result:
    if ctx.differentiable():
        return Result("skip", ctx.differentiable())
    jvp = run(lambda: ctx.fg.jvp(ctx.loss, tuple(ctx.dargs), tuple(ctx.tangents))[1])
    grad = ctx.grad
    if grad.ok and jvp.ok:
        dot = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(leaves(grad.value), ctx.tangents))
        scale = 1.0 + sum(float(np.sum(np.abs(np.asarray(g) * t))) for g, t in zip(leaves(grad.value), ctx.tangents))
        if abs(dot - float(jvp.value)) > ctx.deriv_tol * scale:
            return Result("mismatch", f"grad . t = {dot!r}, jvp = {float(jvp.value)!r}")
        return Result("pass")
    return judge(jvp, grad, "grad vs jvp")


def check_jvp_vs_fd(ctx: Context) -> Result:
    if ctx.differentiable():
        return Result("skip", ctx.differentiable())
    if not ctx.p.fd_meaningful:
        return Result("skip", "a differentiable value passes through float32")
    jvp = run(lambda: ctx.fg.jvp(ctx.loss, tuple(ctx.dargs), tuple(ctx.tangents)))
    if not jvp.ok:
        return Result("internal" if jvp.internal else "mismatch", f"jvp raises {jvp.describe()}")

    def at(h):
        return float(ctx.loss(*[x + h * t for x, t in zip(ctx.dargs, ctx.tangents)]))

    def differences():
        h1, h2 = FD_STEPS
        zero, plus1, minus1 = at(0.0), at(h1), at(-h1)
        central = [(plus1 - minus1) / (2 * h1), (at(h2) - at(-h2)) / (2 * h2)]
        one_sided = [(plus1 - zero) / h1, (zero - minus1) / h1]
        return central, one_sided

    fds = run(differences)
    if not fds.ok:
        return Result("skip", f"finite differences leave the domain ({type(fds.exc).__name__})")
    primal, tangent = float(jvp.value[0]), float(jvp.value[1])
    (d1, d2), (fwd, bwd) = fds.value
    scale = 1.0 + abs(d1)
    if not np.isfinite(d1) or abs(fwd - bwd) > FD_ONE_SIDED * (scale + abs(primal)):
        return Result("skip", "finite differences one-sided slopes differ (a kink, jump or tie here)")
    if abs(d1 - d2) > FD_STABLE * (scale + abs(primal)):
        return Result("skip", "finite differences unstable in the step size")
    if np.isnan(tangent) and _has_nonfinite(ctx.inputs):
        # d/dy x**y at x = inf is inf * 0 = NaN (JAX's too) while the difference of the
        # values, 0 - 0, is 0: the reference is wrong there, not the derivative.
        return Result("skip", "a derivative through an infinite input (inf * 0)")
    if not abs(tangent - d1) <= FD_TOL * scale:
        return Result("mismatch", f"jvp = {tangent!r}, central difference = {d1!r}")
    return Result("pass")


def _has_nonfinite(inputs) -> bool:
    return any(np.asarray(x).dtype.kind in "fc" and not np.all(np.isfinite(np.asarray(x))) for x in inputs)


def check_jit_grad_vs_grad(ctx: Context) -> Result:
    if ctx.differentiable():
        return Result("skip", ctx.differentiable())
    got = run(lambda: ctx.fg.jit(ctx.fg.grad(ctx.loss, argnums=ctx.argnums))(*ctx.dargs))
    return judge(ctx.grad, got, "jit(grad) vs grad", TOL_DERIV, ctx.deriv_loose)


def check_grad_jit_vs_grad(ctx: Context) -> Result:
    if ctx.differentiable():
        return Result("skip", ctx.differentiable())
    got = run(lambda: ctx.fg.grad(ctx.fg.jit(ctx.loss), argnums=ctx.argnums)(*ctx.dargs))
    return judge(ctx.grad, got, "grad(jit) vs grad", TOL_DERIV, ctx.deriv_loose)


CHECK_FUNCS = {name: globals()[f"check_{name}"] for name in CHECKS}


def run_checks(program: Program, on_begin=lambda name: None, only=None,
               on_done=lambda name, result: None) -> dict:
    """Run every check (or those in ``only``) and return ``{name: Result}``."""
    ctx = Context(program)
    results = {}
    for name in CHECKS:
        if only and name not in only:
            continue
        on_begin(name)
        try:
            results[name] = CHECK_FUNCS[name](ctx)
        except Exception as e:  # noqa: BLE001 - a bug in the check harness itself
            results[name] = Result("internal", f"fuzz harness: {type(e).__name__}: {e}")
        on_done(name, results[name])
    return results


# ---------------------------------------------------------------------------------------
# Repro scripts: what a failing check computes, as a copy-pasteable program.
# ---------------------------------------------------------------------------------------
_CALL = {
    "eager_vs_numpy": ["print(f(*args))  # eager funcgrad",
                       "print(f_np(*args))  # NumPy reference"],
    "jaxpr_vs_eager": ["print(f(*args))", "closed = fg.make_jaxpr(f)(*args)", "print(closed)",
                       "print(fg.eval_closed_jaxpr(closed, *args))"],
    "jit_vs_eager": ["print(f(*args))", "print(fg.jit(f)(*args))"],
    "vmap_vs_loop": ["print(fg.vmap(f, in_axes=in_axes)(*bargs))",
                     "print([f(*[a[b] if ax == 0 else a for a, ax in zip(bargs, in_axes)]) for b in range({B})])"],
    "grad_vs_jvp": ["g = fg.grad(loss, argnums={argnums})(*dargs)",
                    "print(sum(float(np.sum(gi * ti)) for gi, ti in zip(g, tangents)))",
                    "print(fg.jvp(loss, dargs, tangents)[1])"],
    "jvp_vs_fd": ["print(fg.jvp(loss, dargs, tangents)[1])", "h = 1e-5",
                  "print((loss(*[x + h * t for x, t in zip(dargs, tangents)])"
                  " - loss(*[x - h * t for x, t in zip(dargs, tangents)])) / (2 * h))"],
    "jit_grad_vs_grad": ["print(fg.grad(loss, argnums={argnums})(*dargs))",
                         "print(fg.jit(fg.grad(loss, argnums={argnums}))(*dargs))"],
    "grad_jit_vs_grad": ["print(fg.grad(loss, argnums={argnums})(*dargs))",
                         "print(fg.grad(fg.jit(loss), argnums={argnums})(*dargs))"],
}


def repro(program: Program, check: str) -> str:
    p = program
    parts = ["import numpy as np", "import funcgrad as fg", "import funcgrad.numpy as fnp",
             "from funcgrad import lax", ""]
    if check == "eager_vs_numpy":
        parts.insert(1, "from tests.fuzz import ref")
    parts.append(p.source(FG))
    if check == "eager_vs_numpy":
        parts.append(p.source(NP, name="f_np"))
    parts.append(p.inputs_source().rstrip())
    parts.append(f"args = ({''.join(n + ', ' for n in p.argnames())})")
    if check == "vmap_vs_loop":
        parts.append(p.batched_source().rstrip())
        parts.append(f"in_axes = {tuple(0 if k in p.batched else None for k in range(len(p.inputs)))}")
        parts.append(f"bargs = ({''.join((f'xb{k}' if k in p.batched else f'x{k}') + ', ' for k in range(len(p.inputs)))})")
    if check in ("grad_vs_jvp", "jvp_vs_fd", "jit_grad_vs_grad", "grad_jit_vs_grad"):
        parts.append("")
        parts.append(p.loss_source())
        parts.append(f"dargs = ({''.join(f'x{k}, ' for k in p.diff)})")
        parts.append(f"tangents = ({''.join(literal(t) + ', ' for t in tangents_for(p))})")
    argnums = tuple(range(len(p.diff)))
    parts += [line.format(B=BATCH, argnums=argnums) for line in _CALL[check]]
    return "\n".join(parts) + "\n"
