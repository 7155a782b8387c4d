"""funcgrad.scipy.interpolate.RegularGridInterpolator and
funcgrad.scipy.spatial.transform (Rotation, Slerp) against SciPy: values, edge cases
(points outside the grid, gimbal lock), jit, and derivatives against finite differences."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.scipy.interpolate import RegularGridInterpolator
from funcgrad.scipy.spatial.transform import Rotation, Slerp
from funcgrad.test_util import check_grads

si = pytest.importorskip("scipy.interpolate")
st = pytest.importorskip("scipy.spatial.transform")
RNG = np.random.default_rng(0)
GRID = (np.sort(RNG.uniform(0, 1, 5)), np.sort(RNG.uniform(-1, 1, 4)), np.array([0.0, 0.5, 2.0]))
XI = np.stack([RNG.uniform(-0.2, 1.2, 40), RNG.uniform(-1.2, 1.2, 40), RNG.uniform(-0.5, 2.5, 40)], -1)


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, 7.0])
def test_regular_grid_matches_scipy(method, fill_value):
    for values in [RNG.normal(size=(5, 4, 3)), RNG.normal(size=(5, 4, 3, 2))]:
        got = RegularGridInterpolator(GRID, values, method, fill_value=fill_value)(XI)
        want = si.RegularGridInterpolator(GRID, values, method, bounds_error=False, fill_value=fill_value)(XI)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=1e-14, equal_nan=True)
    values = RNG.normal(size=(5, 4, 3))
    f = RegularGridInterpolator(GRID, values, "linear", fill_value=fill_value)
    np.testing.assert_allclose(f(XI, method=method),
                               si.RegularGridInterpolator(GRID, values, "linear", bounds_error=False,
                                                          fill_value=fill_value)(XI, method=method),
                               atol=1e-14, equal_nan=True)


def test_regular_grid_tuple_points_jit_grad_and_errors():
    values = RNG.normal(size=(5, 4, 3))
    f = RegularGridInterpolator(GRID, values)
    xs = tuple(XI[:6, k] for k in range(3))
    np.testing.assert_allclose(f(xs), f(XI[:6]), atol=0, equal_nan=True)
    np.testing.assert_allclose(fg.jit(lambda f, x: f(x))(f, XI[:10]), f(XI[:10]), atol=1e-14, equal_nan=True)
    inside = np.array([[0.3 * g[0] + 0.7 * g[1] for g in GRID], [0.6 * g[1] + 0.4 * g[2] for g in GRID]])
    check_grads(lambda x: f(x), (inside,), order=1)
    check_grads(lambda v: RegularGridInterpolator(GRID, v)(inside), (values,), order=1)
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(GRID, values, bounds_error=True)
    with pytest.raises(ValueError, match="shape"):
        f(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="points in dimension"):
        RegularGridInterpolator(GRID, values[:4])


def _q(n=20):
    q = RNG.normal(size=(n, 4))
    return q, Rotation.from_quat(q), st.Rotation.from_quat(q)


def test_rotation_conversions_match_scipy():
    q, r, s = _q()
    np.testing.assert_allclose(r.as_matrix(), s.as_matrix(), atol=1e-15)
    for kw in [dict(), dict(canonical=True), dict(scalar_first=True), dict(canonical=True, scalar_first=True)]:
        np.testing.assert_allclose(r.as_quat(**kw), s.as_quat(**kw), atol=1e-15)
    np.testing.assert_allclose(r.as_rotvec(), s.as_rotvec(), atol=1e-15)
    np.testing.assert_allclose(r.as_rotvec(degrees=True), s.as_rotvec(degrees=True), atol=1e-12)
    np.testing.assert_allclose(r.as_mrp(), s.as_mrp(), atol=1e-15)
    np.testing.assert_allclose(r.magnitude(), s.magnitude(), atol=1e-15)
    m = s.as_matrix()
    np.testing.assert_allclose(Rotation.from_matrix(m).as_quat(canonical=True),
                               st.Rotation.from_matrix(m).as_quat(canonical=True), atol=1e-15)
    skew = m + 1e-3 * RNG.normal(size=m.shape)  # not orthogonal: the nearest rotation, as SciPy
    np.testing.assert_allclose(Rotation.from_matrix(skew).as_matrix(), st.Rotation.from_matrix(skew).as_matrix(),
                               atol=1e-12)
    v = RNG.normal(size=(20, 3))
    for scale in [1.0, 1e-5, 0.0]:
        np.testing.assert_allclose(Rotation.from_rotvec(v * scale).as_quat(), st.Rotation.from_rotvec(v * scale).as_quat(),
                                   atol=1e-15)
    np.testing.assert_allclose(Rotation.from_rotvec(v, degrees=True).as_matrix(),
                               st.Rotation.from_rotvec(v, degrees=True).as_matrix(), atol=1e-15)
    np.testing.assert_allclose(Rotation.from_mrp(v).as_matrix(), st.Rotation.from_mrp(v).as_matrix(), atol=1e-15)


@pytest.mark.parametrize("seq", ["xyz", "ZYX", "xzx", "YXY", "zyz", "XZY", "xy", "Z"])
def test_euler_angles(seq):
    q, r, s = _q()
    angles = RNG.uniform(-3, 3, (20, len(seq)))
    np.testing.assert_allclose(Rotation.from_euler(seq, angles).as_matrix(),
                               st.Rotation.from_euler(seq, angles).as_matrix(), atol=1e-15)
    np.testing.assert_allclose(Rotation.from_euler(seq, angles, degrees=True).as_matrix(),
                               st.Rotation.from_euler(seq, angles, degrees=True).as_matrix(), atol=1e-15)
    if len(seq) == 3:
        np.testing.assert_allclose(r.as_euler(seq), s.as_euler(seq), atol=1e-14)
        symmetric = seq[0].lower() == seq[2].lower()
        middle = [0.0, np.pi] if symmetric else [np.pi / 2, -np.pi / 2]
        lock = st.Rotation.from_euler(seq, [[0.3, middle[0], 0.7], [0.3, middle[1], 0.7]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (SciPy warns of the gimbal lock)
            want = lock.as_euler(seq)
        np.testing.assert_allclose(Rotation(lock.as_quat()).as_euler(seq), want, atol=1e-14)
    with pytest.raises(ValueError, match="consecutive"):
        Rotation.from_euler("xxy", [0.1, 0.2, 0.3])


def test_rotation_operations():
    q, r, s = _q()
    v = RNG.normal(size=(20, 3))
    np.testing.assert_allclose(r.apply(v[0]), s.apply(v[0]), atol=1e-14)
    np.testing.assert_allclose(r.apply(v, inverse=True), s.apply(v, inverse=True), atol=1e-14)
    np.testing.assert_allclose(r[0].apply(v), s[0].apply(v), atol=1e-14)
    np.testing.assert_allclose((r * r.inv()[::-1]).as_matrix(), (s * s.inv()[::-1]).as_matrix(), atol=1e-14)
    w = RNG.uniform(size=20)
    np.testing.assert_allclose(r.mean(w).as_matrix(), s.mean(w).as_matrix(), atol=1e-14)
    np.testing.assert_allclose(r.mean().as_matrix(), s.mean().as_matrix(), atol=1e-14)
    assert len(r) == 20 and r[0].single and not r.single
    assert Rotation.concatenate([r[0], r[1:3]]).as_quat().shape == (3, 4)
    np.testing.assert_allclose(Rotation.identity(3).as_matrix(), np.broadcast_to(np.eye(3), (3, 3, 3)))
    rand = Rotation.random(fg.random.key(0), 1000).as_quat()
    np.testing.assert_allclose(np.linalg.norm(rand, axis=-1), 1.0, atol=1e-14)
    assert abs(np.mean(rand[:, 3])) < 0.1  # (uniform: each component has mean 0)
    with pytest.raises(TypeError, match="no len"):
        len(r[0])
    np.testing.assert_allclose(fg.jit(lambda r, v: r.apply(v))(r, v), s.apply(v), atol=1e-14)
    check_grads(lambda rv, x: Rotation.from_rotvec(rv).apply(x), (v[:3], v[3:6]), order=1)
    check_grads(lambda a: Rotation.from_euler("ZYX", a).as_quat(), (v[:4],), order=1)


def test_slerp():
    _, r, s = _q()
    times = np.array([0.0, 1.0, 2.5, 4.0])
    keys, keys_s = r[:4], s[:4]
    mine, theirs = Slerp(times, keys), st.Slerp(times, keys_s)
    t = np.linspace(0.0, 4.0, 17)
    np.testing.assert_allclose(mine(t).as_matrix(), theirs(t).as_matrix(), atol=1e-14)
    np.testing.assert_allclose(mine(1.3).as_matrix(), theirs(1.3).as_matrix(), atol=1e-14)
    assert mine(1.3).single
    np.testing.assert_allclose(Slerp.init(times, keys)(t).as_quat(), mine(t).as_quat(), atol=0)
    np.testing.assert_allclose(fg.jit(lambda sl, t: sl(t).as_quat())(mine, t), mine(t).as_quat(), atol=1e-14)
    check_grads(lambda t: Slerp(times, keys)(t).as_quat(), (np.array([0.4, 2.0, 3.1]),), order=1)
    with pytest.raises(ValueError, match="one entry per rotation"):
        Slerp(times[:3], keys)
