"""Windows, splits, scaling, NaN handling, the synthetic generators and the ETT CSV loader, and their bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab import forecasting as F


def test_make_windows_match_numpy_slices():
    y = np.random.default_rng(0).normal(size=(50, 3))
    X, Y = F.make_windows(y, 7, 5, stride=3)
    n = (50 - 7 - 5) // 3 + 1
    assert X.shape == (n, 7, 3) and Y.shape == (n, 5, 3)
    for i in (0, 4, n - 1):
        np.testing.assert_array_equal(X[i], y[3 * i:3 * i + 7])
        np.testing.assert_array_equal(Y[i], y[3 * i + 7:3 * i + 12])
    assert 3 * (n - 1) + 12 <= 50 < 3 * n + 12  # the last window is the last that fits


def test_nan_policy_raise_and_interpolate():
    y = np.arange(40.0).reshape(20, 2)
    y[5, 1] = np.nan
    y[6, 1] = np.nan
    with pytest.raises(ValueError, match=r"series has 2 NaN entries \(first at row 5, channel 1\)"):
        F.make_windows(y, 4, 2)
    X, _ = F.make_windows(y, 4, 2, nan_policy="interpolate")
    np.testing.assert_allclose(X[3, :, 1], [7.0, 9.0, 11.0, 13.0])  # the straight line through rows 4 and 7
    with pytest.raises(ValueError, match="nan_policy must be"):
        F.make_windows(y, 4, 2, nan_policy="drop")


def test_ett_splits_borders_and_scaling():
    y = F.ett_like(jax.random.key(0))
    assert y.shape == (17420, 7)
    T = 96
    tr, va, te = F.ett_splits(y, T)
    assert (tr.shape[0], va.shape[0], te.shape[0]) == (8640, 2880 + T, 2880 + T)
    np.testing.assert_array_equal(va[T], y[8640])
    np.testing.assert_array_equal(te[T], y[11520])
    (trs, tes), (mean, std) = F.standard_scale(tr, te)
    np.testing.assert_allclose(mean, np.asarray(tr).mean(0), rtol=1e-12)
    np.testing.assert_allclose(std, np.asarray(tr).std(0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(trs).mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(trs).std(0), 1, rtol=1e-12)
    np.testing.assert_allclose(tes, (np.asarray(te) - np.asarray(tr).mean(0)) / np.asarray(tr).std(0), atol=1e-12)
    # the shared latent factor makes channels correlate (differences remove the random-walk trends)
    d = np.diff(np.asarray(y[:8640]), 24, axis=0)
    corr = np.corrcoef(d.T)[np.triu_indices(7, 1)]
    assert corr.mean() > 0.1


def test_ett_like_spectrum_has_daily_and_weekly_lines():
    y = np.asarray(F.ett_like(jax.random.key(3), n=168 * 40, C=2))
    spec = np.abs(np.fft.rfft(y - y.mean(0), axis=0)) ** 2
    f = np.fft.rfftfreq(y.shape[0])
    for period in (24, 168):
        k = int(np.argmin(np.abs(f - 1 / period)))
        assert np.all(spec[k] > 20 * np.median(spec[k - 40:k + 40], axis=0))


def test_ar1_series_moments():
    phi = 0.7
    y = np.asarray(F.ar1_series(jax.random.key(1), 200_000, phi, C=2))
    # stationary variance 1/(1-phi^2) and lag-1 autocorrelation phi (MC std ~0.5 % and ~0.002)
    np.testing.assert_allclose(y.var(0), 1 / (1 - phi**2), rtol=0.03)
    r1 = [np.corrcoef(y[:-1, c], y[1:, c])[0, 1] for c in range(2)]
    np.testing.assert_allclose(r1, phi, atol=0.01)
    with pytest.raises(ValueError, match=r"phi must satisfy \|phi\| < 1"):
        F.ar1_series(jax.random.key(1), 10, 1.0)


def test_sinusoid_series_closed_form():
    y = np.asarray(F.sinusoid_series(500))[:, 0]
    t = np.arange(500)
    np.testing.assert_allclose(y, np.sin(2 * np.pi * t / 24) + 0.5 * np.sin(2 * np.pi * t / 168 + 0.3), atol=1e-12)


def test_load_ett_csv_reads_etth1():
    y = F.load_ett_csv()
    assert y.shape == (17420, 7)
    np.testing.assert_allclose(y[0], [5.827000141143799, 2.009000062942505, 1.5989999771118164,
                                      0.4620000123977661, 4.203000068664552, 1.3400000333786009, 30.5310001373291])
    ot = F.load_ett_csv(columns=("OT",), rows=3)
    np.testing.assert_allclose(ot[:, 0], [30.5310001373291, 27.78700065612793, 27.78700065612793])


@pytest.mark.parametrize("cell, match", [("", r"bad\.csv line 3, column 'B': not a number: ''"),
                                         ("abc", r"bad\.csv line 3, column 'B': not a number: 'abc'")])
def test_load_ett_csv_names_the_bad_row(tmp_path, cell, match):
    f = tmp_path / "bad.csv"
    f.write_text(f"date,A,B\n2016-07-01 00:00:00,1.0,2.0\n2016-07-01 01:00:00,3.0,{cell}\n")
    with pytest.raises(ValueError, match=match):
        F.load_ett_csv(f)


def test_data_bad_inputs():
    y = jnp.zeros((30, 2))
    with pytest.raises(ValueError, match="T must be >= 1"):
        F.make_windows(y, 0, 2)
    with pytest.raises(ValueError, match="H must be >= 1"):
        F.make_windows(y, 3, 0)
    with pytest.raises(ValueError, match="stride must be >= 1"):
        F.make_windows(y, 3, 2, stride=0)
    with pytest.raises(ValueError, match="series must have at least 31 rows"):
        F.make_windows(y, 20, 11)
    with pytest.raises(ValueError, match="series must be 2-dimensional"):
        F.make_windows(jnp.zeros(30), 3, 2)
    with pytest.raises(ValueError, match="series must have at least 14400 rows"):
        F.ett_splits(jnp.ones((1000, 2)), 96)
    with pytest.raises(ValueError, match="borders must be increasing"):
        F.ett_splits(jnp.ones((1000, 2)), 96, borders=(500, 400, 900))
    with pytest.raises(ValueError, match="train must have non-constant channels"):
        F.standard_scale(jnp.ones((10, 2)))
    with pytest.raises(ValueError, match=r"arrays\[0\] must have 2 channels"):
        F.standard_scale(jnp.arange(20.0).reshape(10, 2), jnp.zeros((5, 3)))
