"""Op-table rows for the funcgrad.scipy.special functions of issue #13, checked against
scipy.special (values within 1e-12 relative; derivatives against finite differences to
second order; vmap against a loop; jit against eager). Samples stay away from poles,
branch switches of finite differences and the roots of each function."""
import numpy as np

from harness import rand, randpos, row

try:
    import scipy.special as sps
except ImportError:  # pragma: no cover - scipy is only needed by these tests
    sps = None

ROWS = []

if sps is not None:
    from funcgrad.scipy import special as fsp

    f32 = np.float32
    TOL = 1e-12

    def same(name, fn_name, *args, rtol=TOL, **kw):
        f, g = getattr(fsp, fn_name), getattr(sps, fn_name)
        return row(f"special.{name}", f, g, *args, rtol=rtol, **kw)

    def f32_ref(fn):
        """SciPy computes float32 inputs in float64 for these; funcgrad rounds to float32."""
        return lambda *a: np.asarray(fn(*[np.asarray(v, np.float64) for v in a])).astype(f32)[()]

    ROWS += [
        # incomplete gamma: series lanes (x < a + 1) and continued-fraction lanes together
        same("gammainc/both_branches", "gammainc", np.array([0.5, 2.0, 7.5, 3.0]), np.array([0.2, 4.0, 5.0, 12.0])),
        same("gammainc/broadcast", "gammainc", randpos(3, 1, low=0.5, high=5.0), randpos(4, low=0.2, high=8.0)),
        same("gammaincc/both_branches", "gammaincc", np.array([0.5, 2.0, 7.5, 3.0]), np.array([0.2, 4.0, 5.0, 12.0])),
        same("gammaincc/0d", "gammaincc", np.float64(4.5), np.float64(2.5)),
        row("special.gammainc/float32", fsp.gammainc, f32_ref(sps.gammainc),
            randpos(3, dtype=f32, low=0.5, high=4.0), randpos(3, dtype=f32, low=0.5, high=4.0), rtol=2e-6),
        same("betainc/both_branches", "betainc", np.array([0.7, 2.0, 5.0]), np.array([1.5, 3.0, 0.8]),
             np.array([0.3, 0.6, 0.9])),
        same("betainc/broadcast", "betainc", randpos(2, 1, low=0.5, high=4.0), np.float64(2.5),
             rand(3, low=0.1, high=0.9)),
        same("betaln/grid", "betaln", randpos(3, 1, low=0.2, high=30.0), randpos(4, low=0.2, high=30.0)),
        same("betaln/large", "betaln", np.array([12.0, 40.0, 3.0]), np.array([15.0, 25.0, 80.0])),
        same("beta/pos", "beta", randpos(4, low=0.3, high=6.0), randpos(4, low=0.3, high=6.0)),
        same("gamma/pos_neg", "gamma", np.array([0.3, 1.7, 4.5, 12.2, -0.5, -2.7])),
        same("gamma/float32", "gamma", randpos(4, dtype=f32, low=0.5, high=5.0), rtol=2e-6),
        same("rgamma/pos_neg", "rgamma", np.array([0.3, 1.7, 4.5, -0.5, -2.7])),
        same("zeta/hurwitz", "zeta", np.array([1.5, 2.0, 3.3, 6.0]), np.array([0.4, 1.0, 2.5, 10.0])),
        same("zeta/broadcast", "zeta", randpos(3, 1, low=1.2, high=5.0), randpos(2, low=0.3, high=4.0)),
        row("special.zeta/riemann", lambda x: fsp.zeta(x), lambda x: sps.zeta(x),
            np.array([-3.5, -0.7, 0.4, 2.5, 7.0]), rtol=TOL),
        same("i0/grid", "i0", np.array([-35.0, -3.0, -0.4, 0.2, 2.0, 12.0, 31.0])),
        same("i0e/grid", "i0e", np.array([-35.0, -3.0, -0.4, 0.2, 2.0, 12.0, 31.0])),
        same("i1/grid", "i1", np.array([-35.0, -3.0, -0.4, 0.2, 2.0, 12.0, 31.0])),
        same("i1e/grid", "i1e", np.array([-35.0, -3.0, -0.4, 0.2, 2.0, 12.0, 31.0])),
        same("i0e/float32", "i0e", rand(4, dtype=f32, low=-5.0, high=5.0), rtol=2e-6),
        same("ndtr/grid", "ndtr", np.array([-30.0, -6.0, -1.2, -0.3, 0.4, 2.5, 7.0])),
        same("log_ndtr/grid", "log_ndtr", np.array([-45.0, -12.0, -1.2, -0.3, 0.4, 2.5, 9.0])),
        same("ndtri/grid", "ndtri", np.array([0.02, 0.3, 0.5, 0.71, 0.98])),
        same("ndtri/tails", "ndtri", np.array([1e-200, 1e-9, 1 - 1e-9]),
             tags={"no_grad": "within a finite-difference step of 0 or 1"}),
        same("ndtri/float32", "ndtri", rand(4, dtype=f32, low=0.05, high=0.95), rtol=2e-6),
        same("erfcx/grid", "erfcx", np.array([-3.0, -0.5, 0.3, 2.0, 9.0, 11.0, 40.0])),
        same("expi/grid", "expi", np.array([-30.0, -2.5, -0.2, 0.1, 1.5, 20.0, 45.0])),
        same("exp1/grid", "exp1", np.array([1e-3, 0.4, 1.9, 2.1, 8.0, 50.0])),
        row("special.multigammaln/d3", lambda a: fsp.multigammaln(a, 3),
            lambda a: np.array([sps.multigammaln(v, 3) for v in np.ravel(a)]).reshape(np.shape(a)),
            randpos(4, low=1.5, high=9.0), rtol=TOL),
        same("factorial/float", "factorial", np.array([0.0, 1.0, 4.0, 10.0, 2.5, 20.0]), rtol=TOL,
             tags={"no_grad": "gamma(n + 1) derivatives are checked by gamma's rows"}),
        same("factorial/int", "factorial", np.array([0, 3, 7, -2]), rtol=TOL),
        same("comb/float", "comb", np.array([10.0, 7.5, 30.0, 4.0]), np.array([3.0, 2.0, 12.0, 6.0])),
        same("kl_div/pos", "kl_div", randpos(5), randpos(5)),
        same("rel_entr/pos", "rel_entr", randpos(2, 3), randpos(3)),
        row("special.sinc/grid", fsp.sinc, np.sinc, np.array([-2.5, -0.3, 0.7, 1.5]), rtol=1e-14),
    ]
