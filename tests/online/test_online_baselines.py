"""Baselines and data: OGD (optax) against a numpy loop, spectral filters against the Hankel matrix and a direct
convolution, and the ETTh1 loader (strict rows, splits, z-scoring)."""

import numpy as np
import optax
import pytest

from jaxlab.data import ett
from jaxlab.online import ogd, spectral, usp


@pytest.fixture(scope="module")
def stream():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((300, 6))
    return a, a @ rng.standard_normal(6) + 0.1 * rng.standard_normal(300)


def numpy_ogd(a, y, eta, radius=None):
    th, out = np.zeros(a.shape[1]), []
    for t in range(len(y)):
        out.append(a[t] @ th)
        th = th - eta * 2 * (out[-1] - y[t]) * a[t]
        if radius is not None:
            th *= min(1.0, radius / np.linalg.norm(th))
    return np.array(out), th


def test_ogd_matches_numpy(stream):
    a, y = stream
    for radius in (None, 0.5):
        state, info = ogd.run(a, y, optax.sgd(0.01), radius=radius)
        ref, th = numpy_ogd(a, y, 0.01, radius)
        np.testing.assert_allclose(info.y_hat, ref, atol=1e-10)
        np.testing.assert_allclose(state.theta[:, 0], th, atol=1e-10)
        np.testing.assert_allclose(info.loss, (ref - y) ** 2, atol=1e-9)
    assert np.linalg.norm(np.asarray(state.theta)) <= 0.5 + 1e-12


def test_hankel_filters():
    L, k = 64, 8
    Z = np.asarray(spectral.hankel_matrix(L))
    i = np.arange(1, L + 1)
    s = i[:, None] + i[None]
    np.testing.assert_allclose(Z, 2.0 / (s**3 - s), rtol=1e-14)
    sigma, phi = spectral.hankel_filters(L, k)
    np.testing.assert_allclose(sigma, np.sort(np.linalg.eigvalsh(Z))[::-1][:k], rtol=1e-6, atol=1e-14)
    np.testing.assert_allclose(Z @ np.asarray(phi), np.asarray(phi) * np.asarray(sigma), atol=1e-12)
    assert np.all(np.diff(np.asarray(sigma)) < 0)


def test_filtered_inputs_equal_direct_convolution():
    rng = np.random.default_rng(2)
    u = rng.standard_normal((100, 2))
    sigma, phi = spectral.hankel_filters(32, 5)
    U = np.asarray(spectral.filtered_inputs(u, sigma, phi))
    ref = np.zeros((100, 5, 2))
    for t in range(100):
        for i in range(min(32, t + 1)):
            ref[t] += np.asarray(phi)[i][:, None] * u[t - i][None]
    ref *= np.asarray(sigma)[None, :, None] ** 0.25
    np.testing.assert_allclose(U, ref, atol=1e-12)
    feats, target = spectral.spectral_features(u[:, 0] * 0 + np.arange(100.0), u, sigma, phi)
    assert feats.shape == (100, 5 * 2 + 3 * 2)
    np.testing.assert_allclose(target[1:], 1.0)  # y_t - y_{t-1}
    _, info = spectral.spectral_ogd_run(np.sin(np.arange(100.0) / 5), u, optax.sgd(1e-3), L=32, k=5,
                                        c=usp.chebyshev_coeffs(2))
    assert info.y_hat.shape == (100,) and np.all(np.isfinite(np.asarray(info.y_hat)))


def test_etth1_loader_and_splits():
    x = ett.load_etth1()
    assert x.shape == (5000, 1)
    np.testing.assert_allclose([x.mean(), x.std()], [0.0, 1.0], atol=1e-12)
    raw = ett.load_csv(ett_path(), ("OT", "HUFL"), rows=3)
    np.testing.assert_allclose(raw.values[0], [30.5310001373291, 5.827000141143799])
    assert raw.times[0] == "2016-07-01 00:00:00" and raw.columns == ("OT", "HUFL")
    full = ett.load_csv(ett_path())
    assert full.values.shape == (17420, 7)
    tr, va, te = ett.split(full.values, ett.ETT_HOURLY_BORDERS)
    assert (len(tr), len(va), len(te)) == (8640, 2880, 2880)
    (_, z), _ = ett.standard_scale(tr, va)
    np.testing.assert_allclose(z[0], (va[0] - tr.mean(0)) / tr.std(0))


def ett_path():
    from jaxlab.data import data_path

    return data_path("ETTh1.csv")


@pytest.mark.parametrize("row, match", [
    ("2016-07-01 05:00:00,1,2,3,4,5,6", "expected 8 fields, got 7"),
    ("2016-07-01 05:00:00,1,2,3,4,5,6,abc", "column 'OT': not a number: 'abc'"),
    ("2016-07-01 05:00:00,1,2,3,4,5,6,", "column 'OT': not a number: ''"),
    ("2016-07-01 05:00:00,1,2,3,4,5,6,nan", "column 'OT': value must be finite"),
])
def test_loader_rejects_malformed_rows(tmp_path, row, match):
    head = "date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT\n2016-07-01 04:00:00,1,2,3,4,5,6,7\n"
    f = tmp_path / "bad.csv"
    f.write_text(head + row + "\n")
    with pytest.raises(ValueError, match="bad.csv line 3, " + match if "fields" not in match else "line 3: " + match):
        ett.load_csv(f)


def test_loader_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="columns must be a non-empty subset"):
        ett.load_csv(ett_path(), ("XX",))
    with pytest.raises(ValueError, match="rows must be <= the 17420 data rows"):
        ett.load_csv(ett_path(), ("OT",), rows=20000)
    with pytest.raises(ValueError, match="borders must be increasing"):
        ett.split(np.zeros(10), (5, 3))
    with pytest.raises(ValueError, match="zero standard deviation"):
        ett.standard_scale(np.ones((4, 1)))
    with pytest.raises(ValueError, match="radius must be > 0"):
        ogd.run(np.ones((3, 2)), np.ones(3), optax.sgd(0.1), radius=-1.0)
    with pytest.raises(ValueError, match="k must be <= 4"):
        spectral.hankel_filters(4, 5)
    f = tmp_path / "empty.csv"
    f.write_text("")
    with pytest.raises(ValueError, match="empty"):
        ett.load_csv(f)

