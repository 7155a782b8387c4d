"""``gaussian_kde``: kernel density estimation with Gaussian kernels, as
``jax.scipy.stats.gaussian_kde`` (a pytree, so an estimator passes through ``jit`` and
``grad``; ``grad`` of its density in the points or the data is the derivative of the
formulas below).

With data ``x_j`` (d, n), weights ``w_j`` (summing to 1; ``neff = 1 / sum w_j^2``) and the
bandwidth factor ``h`` (Scott's ``neff^(-1/(d+4))`` by default, Silverman's
``(neff (d+2) / 4)^(-1/(d+4))``, a number, or a callable of the estimator), the kernel
covariance is ``h^2`` times the weighted data covariance ``C``, and the density at ``y`` is
``sum_j w_j N(y; x_j, h^2 C)``. The evaluation whitens by the Cholesky factor of the
precision, so a point costs one matrix product; ``logpdf`` sums the kernels in log space
(``logsumexp``), finite far in the tails where ``pdf`` underflows to 0.
"""
from __future__ import annotations

import math

import funcgrad.numpy as fnp
from funcgrad.numpy_api._util import asarray, check_arraylike, promote_dtypes_inexact, shape_of
from funcgrad.scipy.special import logsumexp, ndtr
from funcgrad.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]


def _points(kde, points, fname):
    """``points`` as a (d, m) array (SciPy: a (m, d) one with m == 1 is transposed)."""
    check_arraylike(fname, points)
    pts = fnp.atleast_2d(asarray(points, fname=fname))
    d, m = shape_of(pts)[0], shape_of(pts)[1] if len(shape_of(pts)) > 1 else 1
    if d != kde.d:
        if d == 1 and m == kde.d:
            return fnp.reshape(pts, (kde.d, 1))
        raise ValueError(f"{fname}: points have dimension {d}, the data have dimension {kde.d} "
                         f"(points must have shape ({kde.d}, m), got {shape_of(pts)})")
    return pts


@register_pytree_node_class
class gaussian_kde:
    """``gaussian_kde(dataset, bw_method=None, weights=None)``: a Gaussian kernel density
    estimate of ``dataset`` (d, n) (a 1-d dataset is d = 1), as SciPy's and JAX's.

    Attributes ``dataset``, ``weights``, ``d``, ``n``, ``neff``, ``covariance``,
    ``inv_cov``; methods ``evaluate`` (also ``pdf`` and calling the estimator),
    ``logpdf``, ``integrate_gaussian``, ``integrate_box_1d``, ``integrate_kde`` and
    ``resample(key, shape=())``. ``set_bandwidth`` and ``integrate_box`` are not provided
    (neither are they in JAX).

    >>> kde = gaussian_kde(np.array([0.0, 1.0, 1.5, 3.0]))
    >>> round(float(kde.integrate_box_1d(-np.inf, np.inf)), 12)
    1.0
    """

    def __init__(self, dataset, bw_method=None, weights=None):
        check_arraylike("gaussian_kde", dataset)
        data = fnp.atleast_2d(asarray(dataset, fname="gaussian_kde"))
        (data,) = promote_dtypes_inexact(data, fname="gaussian_kde")
        d, n = shape_of(data)
        if n < 2:
            raise ValueError(f"gaussian_kde: the dataset needs more than one point, got shape {shape_of(data)}")
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            w = fnp.atleast_1d(asarray(weights, fname="gaussian_kde")).astype(fnp.result_type(data))
            if shape_of(w) != (n,):
                raise ValueError(f"gaussian_kde: weights must have shape ({n},) (one per point), got {shape_of(w)}")
            w = w / fnp.sum(w)
            neff = 1.0 / fnp.sum(w * w)
        else:
            w = fnp.full((n,), 1.0 / n, fnp.result_type(data))
            neff = float(n)
        self.dataset, self.weights, self.neff = data, w, neff
        if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
            factor = neff ** (-1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = (neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif isinstance(bw_method, str):
            raise ValueError(f"gaussian_kde: bw_method must be 'scott', 'silverman', a number or a callable, "
                             f"got {bw_method!r}")
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            factor = bw_method
        cov = fnp.atleast_2d(fnp.cov(data, rowvar=True, bias=False, aweights=w)).astype(fnp.result_type(data))
        self.covariance = cov * factor**2
        self.inv_cov = fnp.linalg.inv(cov) / factor**2

    @property
    def d(self):
        """The dimension of the data."""
        return shape_of(self.dataset)[0]

    @property
    def n(self):
        """The number of data points."""
        return shape_of(self.dataset)[1]

    def tree_flatten(self):
        """Pytree protocol: the arrays are the leaves."""
        return (self.dataset, self.weights, self.covariance, self.inv_cov, self.neff), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        """Pytree protocol: an estimator from its leaves, without recomputing them."""
        obj = object.__new__(cls)
        obj.dataset, obj.weights, obj.covariance, obj.inv_cov, obj.neff = children
        return obj

    def _kernel_logs(self, points, fname):
        """(m, n) log of ``N(y_i; x_j, covariance)``, and the weights."""
        pts = _points(self, points, fname)
        whiten = fnp.linalg.cholesky(self.inv_cov)  # lower L with L L^T = precision
        x = fnp.matmul(fnp.transpose(self.dataset), whiten)
        y = fnp.matmul(fnp.transpose(pts), whiten)
        log_norm = fnp.sum(fnp.log(fnp.diagonal(whiten))) - 0.5 * self.d * math.log(2 * math.pi)
        diff = y[:, None, :] - x[None, :, :]
        return log_norm - 0.5 * fnp.sum(diff * diff, axis=-1)

    def evaluate(self, points):
        """The estimated density at ``points`` (d, m): shape (m,)."""
        return fnp.sum(self.weights * fnp.exp(self._kernel_logs(points, "gaussian_kde.evaluate")), axis=-1)

    __call__ = evaluate

    def pdf(self, x):
        """The estimated density at ``x`` (d, m), as ``evaluate``."""
        return self.evaluate(x)

    def logpdf(self, x):
        """The log of the estimated density at ``x`` (d, m), summed in log space."""
        return logsumexp(self._kernel_logs(x, "gaussian_kde.logpdf") + fnp.log(self.weights), axis=-1)

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the normal density ``N(mean, cov)``."""
        check_arraylike("gaussian_kde.integrate_gaussian", mean, cov)
        mean = fnp.atleast_1d(asarray(mean, fname="gaussian_kde.integrate_gaussian"))
        cov = fnp.atleast_2d(asarray(cov, fname="gaussian_kde.integrate_gaussian"))
        if shape_of(mean) != (self.d,) or shape_of(cov) != (self.d, self.d):
            raise ValueError(f"gaussian_kde.integrate_gaussian: mean must have shape ({self.d},) and cov "
                             f"({self.d}, {self.d}), got {shape_of(mean)} and {shape_of(cov)}")
        return self._pair_integral(self.dataset, self.weights, self.covariance + cov, mean[:, None],
                                   fnp.ones((1,), fnp.result_type(mean)))

    def integrate_box_1d(self, low, high):
        """The probability mass between ``low`` and ``high`` (one-dimensional data only)."""
        if self.d != 1:
            raise ValueError(f"gaussian_kde.integrate_box_1d: the data must be one-dimensional, got d = {self.d}")
        std = fnp.sqrt(self.covariance[0, 0])
        lo = (low - self.dataset[0]) / std
        hi = (high - self.dataset[0]) / std
        return fnp.sum(self.weights * (ndtr(hi) - ndtr(lo)))

    def integrate_kde(self, other):
        """The integral of the product of this density and ``other``'s (same dimension)."""
        if other.d != self.d:
            raise ValueError(f"gaussian_kde.integrate_kde: the estimators have dimensions {self.d} and {other.d}")
        return self._pair_integral(self.dataset, self.weights, self.covariance + other.covariance,
                                   other.dataset, other.weights)

    @staticmethod
    def _pair_integral(xa, wa, cov, xb, wb):
        """``sum_ij wa_i wb_j N(xa_i - xb_j; 0, cov)``."""
        chol = fnp.linalg.cholesky(cov)
        diff = xa[:, :, None] - xb[:, None, :]  # (d, na, nb)
        d = shape_of(xa)[0]
        z = fnp.linalg.solve(chol, fnp.reshape(diff, (d, -1)))
        energies = 0.5 * fnp.reshape(fnp.sum(z * z, axis=0), shape_of(diff)[1:])
        norm = (2 * math.pi) ** (d / 2.0) * fnp.prod(fnp.diagonal(chol))
        return fnp.sum(wa[:, None] * wb[None, :] * fnp.exp(-energies)) / norm

    def resample(self, key, shape=()):
        """``shape`` random draws from the estimate, as a (d, *shape) array: a data point
        picked by weight plus a normal kernel draw (``funcgrad.random``)."""
        from funcgrad import random

        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, fnp.zeros(self.d, fnp.result_type(self.covariance)),
                                         self.covariance, shape=shape)
        return self.dataset[:, ind] + fnp.moveaxis(eps, -1, 0)

    def set_bandwidth(self, bw_method=None):
        """Not provided (as in JAX: an estimator is an immutable value); build a new one."""
        raise NotImplementedError("gaussian_kde.set_bandwidth: an estimator is immutable (as in JAX); "
                                  "create a new gaussian_kde(dataset, bw_method=...) instead")

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not provided (as in JAX: SciPy's needs a multivariate normal cdf)."""
        raise NotImplementedError("gaussian_kde.integrate_box: not implemented (as in JAX); for "
                                  "one-dimensional data use integrate_box_1d")


