"""Op-table rows for funcgrad.scipy.special, checked against scipy.special.

SciPy is a test-only dependency: without it this module contributes no rows.

Inputs avoid poles and the roots of each function: next to a root the relative error of
any float64 implementation (SciPy's included) grows without bound, so fixed negative
samples are chosen between the roots of gammaln/digamma. Rows whose inputs sit on
special values (+-inf, 0 where a function has a kink) are tagged ``no_grad``.
"""
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
    SPECIAL = {"no_grad": "special values (inf, 0 on a kink): checks SciPy's exact handling"}

    def same(name, fn_name, *args, **kw):
        """``funcgrad.scipy.special.<fn_name>`` vs ``scipy.special.<fn_name>``."""
        static = kw.pop("static", {})
        f, g = getattr(fsp, fn_name), getattr(sps, fn_name)
        return row(f"special.{name}", lambda *a: f(*a, **static), lambda *a: g(*a, **static), *args, **kw)

    def polygamma_ref(n, x):
        """SciPy's polygamma returns float64 for float32 x; funcgrad keeps x's dtype."""
        out = sps.polygamma(n, x)
        return out.astype(f32) if np.asarray(x).dtype == f32 else out

    def polygamma_row(name, n, x, **kw):
        return row(f"special.polygamma/{name}", lambda v: fsp.polygamma(n, v), lambda v: polygamma_ref(n, v), x, **kw)

    # Negative samples between the poles and away from the roots of gammaln
    # (-2.457, -2.747, -3.144, -3.955, ...) and of digamma (-0.504, -1.573, -2.611, ...).
    NEG_GAMMALN = np.array([-0.5, -1.5, -2.2, -3.5, -4.3])
    NEG_DIGAMMA = np.array([-0.3, -1.2, -2.3, -3.2, -4.8])
    POS = randpos(3, 4, low=0.2, high=6.0)
    # Probabilities for logit, away from 0 and 1.
    PROB = rand(2, 5, low=0.05, high=0.95)

    ROWS += [
        # --- erf family --------------------------------------------------------------------
        same("erf/2d", "erf", rand(3, 4)),
        same("erf/float32", "erf", rand(5, dtype=f32)),
        same("erf/0d", "erf", np.float64(0.7)),
        same("erf/int", "erf", np.array([-2, 0, 1, 3])),
        same("erf/inf", "erf", np.array([-np.inf, np.inf, 0.0, np.nan]), tags=SPECIAL),
        same("erfc/2d", "erfc", rand(3, 4, low=-2.0, high=4.0)),
        same("erfc/tail", "erfc", np.array([4.5, 6.0, 8.0, 12.0, 20.0]),
             tags={"no_grad": "values ~1e-89..1e-10: finite differences see only rounding"}),
        same("erfc/float32", "erfc", rand(2, 3, dtype=f32)),
        same("erfc/0d", "erfc", np.float64(-1.3)),
        same("erfinv/2d", "erfinv", rand(3, 4, low=-0.95, high=0.95)),
        same("erfinv/tails", "erfinv", np.array([0.999, -0.99999, 1 - 1e-12, 1e-20]),
             tags={"no_grad": "within 1e-12 of the singularity at 1: finite differences step past it"}),
        same("erfinv/float32", "erfinv", rand(4, dtype=f32, low=-0.9, high=0.9)),
        # --- gamma family ------------------------------------------------------------------
        same("gammaln/pos", "gammaln", POS),
        same("gammaln/near_roots", "gammaln", np.array([0.9, 1.05, 1.3, 1.7, 1.95, 2.2])),
        same("gammaln/neg", "gammaln", NEG_GAMMALN),
        same("gammaln/large", "gammaln", np.array([30.5, 1e3, 1e6])),
        same("gammaln/float32", "gammaln", randpos(2, 3, dtype=f32, low=0.5, high=4.0)),
        same("gammaln/0d", "gammaln", np.float64(3.7)),
        same("digamma/pos", "digamma", POS),
        same("digamma/near_root", "digamma", np.array([1.3, 1.42, 1.5, 1.6, 1.8])),
        same("digamma/neg", "digamma", NEG_DIGAMMA),
        same("digamma/large", "digamma", np.array([15.0, 250.0, 1e5])),
        same("digamma/float32", "digamma", randpos(4, dtype=f32, low=0.5, high=4.0)),
        same("digamma/0d", "digamma", np.float64(0.25)),
        same("psi/alias", "psi", randpos(3, low=0.5, high=4.0)),
        polygamma_row("n1", 1, POS),
        polygamma_row("n2", 2, randpos(2, 3, low=0.3, high=5.0)),
        polygamma_row("n3_small", 3, np.array([0.05, 0.5, 1.0, 7.5])),
        polygamma_row("n1_neg", 1, NEG_DIGAMMA),
        polygamma_row("n3_neg", 3, np.array([-0.3, -1.2, -2.7])),
        polygamma_row("n0", 0, randpos(3, low=0.5, high=4.0)),
        polygamma_row("float32", 1, randpos(3, dtype=f32, low=0.5, high=4.0)),
        row("special.polygamma/n_array", lambda x: fsp.polygamma(np.array([[0], [1], [2]]), x),
            lambda x: sps.polygamma(np.array([[0], [1], [2]]), x), randpos(4, low=0.5, high=4.0)),
        # --- logistic ----------------------------------------------------------------------
        same("expit/2d", "expit", rand(3, 4, low=-5.0, high=5.0)),
        same("expit/tails", "expit", np.array([-700.0, -40.0, -20.0, 20.0, 40.0])),
        same("expit/float32", "expit", rand(5, dtype=f32, low=-5.0, high=5.0)),
        same("expit/0d", "expit", np.float64(-0.4)),
        same("logit/2d", "logit", PROB),
        same("logit/near_half", "logit", np.array([0.3, 0.49, 0.5 + 1e-9, 0.51, 0.7])),
        same("logit/tiny", "logit", np.array([1e-12, 1e-5, 1 - 1e-5]),
             tags={"no_grad": "within 1e-5 of the singularities at 0 and 1: finite differences step past them"}),
        same("logit/float32", "logit", rand(4, dtype=f32, low=0.1, high=0.9)),
        # --- x log y -----------------------------------------------------------------------
        same("xlogy/2d", "xlogy", rand(3, 4), randpos(3, 4)),
        same("xlogy/broadcast", "xlogy", rand(3, 1), randpos(4)),
        same("xlogy/x_zero", "xlogy", np.array([0.0, 0.0, 1.5, 0.0]), randpos(4)),
        same("xlogy/zero_zero", "xlogy", np.array([0.0, 0.0, 2.0]), np.array([0.0, np.inf, 0.0]), tags=SPECIAL),
        same("xlogy/float32", "xlogy", rand(3, dtype=f32), randpos(3, dtype=f32)),
        same("xlogy/scalar_x", "xlogy", 2.5, randpos(2, 3)),
        same("xlog1py/2d", "xlog1py", rand(2, 3), rand(2, 3, low=-0.9, high=2.0)),
        same("xlog1py/broadcast", "xlog1py", rand(4), rand(2, 1, low=-0.5, high=1.0)),
        same("xlog1py/x_zero", "xlog1py", np.array([0.0, 1.0, 0.0]), np.array([-0.5, 0.3, 2.0])),
        same("entr/pos", "entr", randpos(3, 4)),
        same("entr/special", "entr", np.array([0.0, -1.0, 2.0]), tags=SPECIAL),
        # --- reductions --------------------------------------------------------------------
        same("logsumexp/all", "logsumexp", rand(3, 4)),
        same("logsumexp/axis1", "logsumexp", rand(3, 4), static=dict(axis=1)),
        same("logsumexp/axis_tuple_keepdims", "logsumexp", rand(2, 3, 4), static=dict(axis=(0, 2), keepdims=True)),
        same("logsumexp/axis_neg", "logsumexp", rand(2, 3, 4), static=dict(axis=-1)),
        same("logsumexp/0d", "logsumexp", np.float64(1.25)),
        same("logsumexp/float32", "logsumexp", rand(3, 4, dtype=f32), static=dict(axis=0)),
        same("logsumexp/large", "logsumexp", np.array([1000.0, 1001.0, 999.5])),
        same("logsumexp/neg_inf", "logsumexp", np.array([[0.5, -np.inf, 1.5], [-np.inf, -np.inf, -np.inf]]), static=dict(axis=1),
             tags={"no_grad": "an all -inf row: its value is -inf (see test_scipy_special_edge_cases.py for the gradient)"}),
        row("special.logsumexp/b", lambda a, b: fsp.logsumexp(a, axis=1, b=b), lambda a, b: sps.logsumexp(a, axis=1, b=b),
            rand(3, 4), randpos(3, 4)),
        row("special.logsumexp/b_broadcast", lambda a, b: fsp.logsumexp(a, axis=0, b=b), lambda a, b: sps.logsumexp(a, axis=0, b=b),
            rand(3, 4), randpos(3, 1)),
        row("special.logsumexp/return_sign", lambda a, b: fsp.logsumexp(a, b=b, axis=1, return_sign=True),
            lambda a, b: sps.logsumexp(a, b=b, axis=1, return_sign=True),
            np.array([[1.0, 2.0, 0.5], [0.2, -0.3, 1.1]]), np.array([[-1.0, 0.5, 2.0], [1.0, -2.0, 0.4]])),
        same("softmax/all", "softmax", rand(3, 4)),
        same("softmax/axis0", "softmax", rand(3, 4), static=dict(axis=0)),
        same("softmax/axis_tuple", "softmax", rand(2, 3, 4), static=dict(axis=(0, 2))),
        same("softmax/float32", "softmax", rand(2, 5, dtype=f32), static=dict(axis=-1)),
        same("softmax/large", "softmax", np.array([1000.0, 1001.0, 999.5])),
        same("log_softmax/all", "log_softmax", rand(3, 4)),
        same("log_softmax/axis1", "log_softmax", rand(3, 4), static=dict(axis=1)),
        same("log_softmax/float32", "log_softmax", rand(4, 2, dtype=f32), static=dict(axis=0)),
        same("log_softmax/neg_inf", "log_softmax", np.array([-np.inf, 0.0, 1.0]), tags=SPECIAL),
    ]
