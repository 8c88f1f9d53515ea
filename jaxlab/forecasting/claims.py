"""Claims of Evolutionary Forecasting (area ``forecasting``; J. Ma et al., arXiv:2601.23114): DF = EF(H = L),
the AR(1) oracle's k-step MSE for any training horizon, exact extrapolation of a linear recurrence, disjoint
gradients in Linear models, the truncation anomaly (Fig. 1 analogue) and EF vs horizon-specific DF models on the
ETT-like synthetic series.

The trained-model claims (not quick) use this budget: MLP ``T -> 256 -> 256 -> H`` and Linear models,
``T = 336``, 2,000 AdamW steps (lr 1e-3, clipping 1.0), batch 64 windows of all 7 channels, the ETT splits
standard-scaled on the train split, every test window scored. The data: the ETT-like synthetic series
``ett_like(key(0))``, except for the MLP truncation anomaly and the extreme extrapolation, which use the shipped
ETTh1 (the paper's data) over five seeds and train 250 steps, the validation optimum (see the anomaly's claim).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab import forecasting as F
from jaxlab.core import ClaimResult, claim, mean_and_se
from jaxlab.core.verification import by_precision
from jaxlab.forecasting.papers import EF

TITLE = "Evolutionary Forecasting: EF roll-outs vs direct forecasting, oracle identities and the truncation anomaly"
MODULES = (
    "jaxlab.forecasting.evolutionary",
    "jaxlab.forecasting.models",
    "jaxlab.forecasting.train",
    "jaxlab.forecasting.evaluate",
    "jaxlab.forecasting.diagnostics",
    "jaxlab.forecasting.synthetic",
    "jaxlab.data.ett",
)

_AREA = "forecasting"
T = 336
LS = (96, 192, 336, 720)
STEPS = 2000
SEEDS = (0, 1, 2, 3, 4)
ETTH1_STEPS = 250


@functools.cache
def _data():
    tr, va, te = F.ett_splits(F.ett_like(jax.random.key(0)), T)
    (tr, va, te), _ = F.standard_scale(tr, va, te)
    return tr, va, te


@functools.cache
def _trained(kind: str, H: int):
    cls = {"mlp": F.MLPForecaster, "linear": F.Linear}[kind]
    return F.train_forecaster(jax.random.key(1), cls(T, H, key=jax.random.key(2)), _data()[0], num_steps=STEPS)


@claim(area=_AREA, paper=EF, quick=True)
def df_equals_ef_with_one_step() -> ClaimResult:
    """Claim 1: DF = EF(H = L): an MLP (T = 336, H = 96) on 100 test windows, both jitted and vmapped. Both must
    equal the model called directly on each window (the reference shares no code with ef_forecast/df_forecast):
    measured = max |EF - f(X)| / max |f(X)| (<= 1e-12; float32: 1e-6, the same arithmetic compiled in another
    program), and EF = DF exactly (with one evolution step both are the same single model call)."""
    X, _ = F.make_windows(_data()[2], T, 96, stride=28)
    m = F.MLPForecaster(T, 96, key=jax.random.key(3))
    ef = jax.jit(jax.vmap(lambda x: F.ef_forecast(m, x, 96)))(X)
    df = jax.jit(jax.vmap(lambda x: F.df_forecast(m, x, 96)))(X)
    direct = jax.jit(jax.vmap(m))(X)
    err = float(jnp.max(jnp.abs(ef - direct)) / jnp.max(jnp.abs(direct)))
    details = f"{X.shape[0]} windows x 7 channels; max |EF - DF| = {float(jnp.max(jnp.abs(ef - df))):.1e}"
    res = ClaimResult.at_most(err, by_precision(1e-12, 1e-6), details=details)
    return res if bool(jnp.all(ef == df)) else ClaimResult(res.measured, res.expected, res.tolerance, False, details)


@claim(area=_AREA, paper=EF, quick=True)
def ar1_oracle_k_step_mse() -> ClaimResult:
    """Claim 2: AR(1), phi = 0.9: EF with the oracle block predictor for H in {1, 4, 24} gives the same forecasts
    (max difference <= 1e-5 of the largest forecast) and the MSE over k = 1..96 equals
    mean_k (1 - phi^2k)/(1 - phi^2) = 5.0294: the mean over 4e5 independent Monte-Carlo windows lies within 5
    standard errors of it (SE from the spread of the windows' own MSEs, about 0.07 %: 5 SE is a 0.35 % band)."""
    phi, L, n, chunks = 0.9, 96, 400_000, 8

    @jax.jit
    def window_mse(keys):
        def chunk(ks):
            ser = jax.vmap(lambda k: F.ar1_series(k, 2 + L, phi))(ks)
            X, Y = ser[:, :2], ser[:, 2:]
            preds = [jax.vmap(lambda x, H=H: F.ef_forecast(F.ar1_oracle(phi, H), x, L))(X) for H in (1, 4, 24)]
            rel = jnp.max(jnp.abs(jnp.stack(preds[1:]) - preds[0])) / jnp.max(jnp.abs(preds[0]))
            return jnp.mean((preds[-1] - Y) ** 2, axis=(1, 2)), rel

        mse, rel = jax.lax.map(chunk, keys.reshape(chunks, n // chunks))
        return mse.reshape(n), jnp.max(rel)

    mse, rel = window_mse(jax.random.split(jax.random.key(0), n))
    k = np.arange(1, L + 1)
    expected = float(np.mean((1 - phi ** (2 * k)) / (1 - phi**2)))
    if float(rel) > 1e-5:
        return ClaimResult(float(rel), "<= 1e-5", 1e-5, False, "forecasts differ across H")
    # one window's errors are independent of every other window's (its own key): the windows are replicates.
    # float32: a forecast phi^k y rounds by <= k eps32 |y| (~1e-5 of a window's scale at k = 96) and its squared
    # error by ~2e-5 relative, uncorrelated across windows: the mean moves by << the SE (~3.5e-3)
    # k = 5 (a fail rate of 6e-7 for a correct code): key 0 lands at z = -3.8, keys 1-10 at |z| <= 2.0
    mean, se = mean_and_se(mse)
    return ClaimResult.within_se(mean, expected, se, k=5.0,
                                 details=f"{n} windows; max relative difference of the H = 1, 4, 24 forecasts "
                                         f"{float(rel):.1e}")


@claim(area=_AREA, paper=EF, quick=True,
       needs_float64="the 1e-10 figure is below float32 resolution: the float32 coefficients of the 4-dimensional "
                     "linear recurrence are rounded by ~eps32 and 30 chained 24-step EF rounds amplify the error "
                     "~1000x (1e-4 measured); a float64 run reports that float32 figure in its details")
def exact_recurrence_extrapolates_720_steps() -> ClaimResult:
    """Claim 3: y_t = sin(2 pi t/24) + 0.5 sin(2 pi t/168 + 0.3); least-squares Linear (T = 336, H = 24) on the
    first 4,000 points, EF to L = 720 from t = 4500; measured = max |error| in float64 (float32 in details,
    bound 1e-5)."""
    y = F.sinusoid_series(5300)
    X, Y = F.make_windows(y[:4000], T, 24)
    m = F.fit_linear(X, Y, bias=False)
    errs = {}
    for dt in (jnp.float64, jnp.float32):
        md = jax.tree_util.tree_map(lambda a, dt=dt: a.astype(dt), m)
        pred = F.ef_forecast(md, y[4500 - T:4500].astype(dt), 720)
        errs[dt] = float(jnp.max(jnp.abs(pred - y[4500:5220])))
    return ClaimResult.at_most(errs[jnp.float64], 1e-10, details=f"float32: {errs[jnp.float32]:.2e} (<= 1e-5)")


@claim(area=_AREA, paper=EF, quick=True)
def linear_near_and_far_gradients_are_orthogonal() -> ClaimResult:
    """Claim 3b: in a Linear model (output steps share no parameter) cos(grad l_near, grad l_far) = 0 exactly, on every
    minibatch (L = 720 split at H = 96; RevIN on); measured = max |cos| over 20 batches of 64 windows."""
    X, Y = F.make_windows(_data()[0], T, 720, stride=5)
    out = F.gradient_conflict(F.Linear(T, 720, key=jax.random.key(4)), X[:1280], Y[:1280], 96)
    return ClaimResult.at_most(float(jnp.max(jnp.abs(out["cos"]))), 0.0)


def _mse96(model, test=None) -> float:
    return F.evaluate_horizons(model, _data()[2] if test is None else test, [96])[96]["mse"]


@functools.cache
def _etth1():
    """ETTh1 (shipped in :mod:`jaxlab.data`), its ETT splits standard-scaled on the train split."""
    series = jnp.asarray(F.load_ett_csv(), jnp.result_type(float))
    tr, va, te = F.ett_splits(series, T)
    (tr, va, te), _ = F.standard_scale(tr, va, te)
    return tr, va, te


@functools.cache
def _etth1_mlp(H: int, seed: int):
    """The MLP ``T -> 256 -> 256 -> H`` trained on the ETTh1 train split for ``ETTH1_STEPS`` steps, seed ``seed``."""
    model = F.MLPForecaster(T, H, key=jax.random.key(2 + 10 * seed))
    return F.train_forecaster(jax.random.key(1 + 10 * seed), model, _etth1()[0], num_steps=ETTH1_STEPS)


@claim(area=_AREA, paper=EF, quick=False)
def truncated_long_mlp_is_worse_at_96() -> ClaimResult:
    """Claim 4 (Fig. 1 of Ma et al., arXiv:2601.23114): a model trained with output horizon 720 and truncated to its
    first 96 steps is worse at 96 than one trained with H = 96. Measured on ETTh1 (the paper's data):
    r_s = MSE@96(H = 720, truncated) / MSE@96(H = 96) for the shared-hidden-layer MLP ``T -> 256 -> 256 -> H``
    (RevIN, T = 336, every test window), seeds s = 0..4 (weights and minibatches reseeded); the check: every
    r_s >= 1 (measured = min_s r_s); mean +- SE and the near/far gradient cosine of the H = 720 model in details.
    Measured: r = 1.015, 1.050, 1.047, 1.083, 1.043 in float64 (mean 1.047 +- 0.011 SE) and 1.056, 1.069, 1.041,
    1.054, 1.034 in float32 (mean 1.051 +- 0.006): the truncated model is ~5 % worse at 96. The near and far
    gradients of the H = 720 model are mostly aligned (seed 0: mean cosine +0.17, 20 % of minibatches < 0), so
    the paper's attribution to conflicting gradients is only partly visible here.

    Training length: the Time-Series-Library protocol of the LTSF benchmarks stops training on the validation loss
    (the paper's own training details were not readable: this regime is our reconstruction). Checkpoints every 250
    AdamW steps up to 2,000 (seed 0) put the lowest validation MSE of both models at 250 steps (H = 96: 0.681 at
    250, 0.898 at 2,000; H = 720: 1.636 at 250, 1.784 at 2,000; about one epoch of the train split), so these
    models train ``ETTH1_STEPS = 250`` steps. With the fixed 2,000 steps of the other claims both models overfit,
    the H = 96 one more (7.5x fewer targets per window), and the comparison inverts: r = 0.844, 0.845 (seeds 0, 1)
    on ETTh1 and 0.977, 0.950, 0.932 on the ETT-like synthetic series (seeds 0-2); at 250 steps the synthetic
    series gives r = 0.996, 1.036 (seeds 0, 1): no clear anomaly there (why it differs from ETTh1 is not settled
    here). The anomaly is a statement about models trained to their validation optimum, on real data."""
    tr, _, te = _etth1()
    r = np.asarray([_mse96(_etth1_mlp(720, s), te) / _mse96(_etth1_mlp(96, s), te) for s in SEEDS])
    mean, se = mean_and_se(r)
    X, Y = F.make_windows(tr, T, 720, stride=5)
    g = F.gradient_conflict(_etth1_mlp(720, 0), X[:1280], Y[:1280], 96)
    return ClaimResult.at_least(float(np.min(r)), 1.0,
                                details=f"ETTh1 ratios {', '.join(f'{v:.4f}' for v in r)}: mean {float(mean):.4f} "
                                        f"+- {float(se):.4f} (SE, {len(r)} seeds); seed 0 H = 720: cos(near, far) "
                                        f"mean {float(g['cos_mean']):+.3f}, fraction < 0 "
                                        f"{float(g['frac_negative']):.2f}")


@claim(area=_AREA, paper=EF, quick=False)
def truncated_long_linear_agrees_at_96() -> ClaimResult:
    """Claim 4: the same comparison for Linear (no shared parameters): the two MSE@96 agree within 2 %;
    measured = |ratio - 1|."""
    a, b = _mse96(_trained("linear", 720)), _mse96(_trained("linear", 96))
    return ClaimResult.at_most(abs(a / b - 1), 0.02, details=f"MSE@96 truncated {a:.4f}, H=96 {b:.4f}")


@functools.cache
def _ef_df_tables():
    ef = F.evaluate_horizons(_trained("mlp", 96), _data()[2], LS, "ef")
    df = F.evaluate_horizons({L: _trained("mlp", L) for L in LS}, _data()[2], LS, "df")
    return ef, df


@claim(area=_AREA, paper=EF, quick=False)
def ef_beats_df_on_average() -> ClaimResult:
    """Claim 5: one MLP with H = 96 rolled out to L in {96, 192, 336, 720} vs four DF MLPs (one per L); measured =
    mean_L MSE_DF / mean_L MSE_EF (paper: > 1, EF better on average)."""
    ef, df = _ef_df_tables()
    ratio = np.mean([df[L]["mse"] for L in LS]) / np.mean([ef[L]["mse"] for L in LS])
    rows = "; ".join(f"L={L}: EF {ef[L]['mse']:.4f}/{ef[L]['mae']:.4f} DF {df[L]['mse']:.4f}/{df[L]['mae']:.4f}"
                     for L in LS)
    return ClaimResult.at_least(ratio, 1.0, details=f"MSE/MAE {rows}")


@claim(area=_AREA, paper=EF, quick=False)
def ef_stays_bounded_at_2880() -> ClaimResult:
    """Claim 5, extreme extrapolation ("robust asymptotic stability", Ma et al., arXiv:2601.23114): on ETTh1 the
    H = 96 MLP of claim 4 (five seeds, trained to the validation optimum, 250 steps) rolled out 2,880 steps (30
    evolutions, RevIN inside each) from the 121 windows (stride 24) of the validation + test span; measured = the
    largest, over the seeds, of MSE / the span's variance (per channel, averaged); bound: finite and <= 2 for every
    seed (robust: no seed may diverge). Measured: 1.59, 1.88, 1.36, 1.45, 1.36 in float64 and 1.33, 1.52, 1.38,
    1.33, 1.42 in float32; the window-mean forecast gives 1.45 and the H = 96 Linear model 1.16 to 1.56: bounded,
    but at 2,880 steps no better than the window mean.

    Trained 2,000 steps (far past the validation optimum) on the ETT-like synthetic series the same MLP is not
    robustly stable: seed 0 reaches 6.6x the variance (seeds 1, 2: 1.41, 1.91), as RevIN rescales every evolution
    window and a slope the overfitted MLP extrapolates compounds over 30 evolutions; at 250 steps the same seeds
    give 1.31 and 1.45. Details: per-seed ratios, the H = 96 Linear model (seed 0) and the window-mean forecast."""
    _, va, te = _etth1()
    span = jnp.concatenate([va, te[T:]])
    var = float(jnp.mean(jnp.var(span[T:], axis=0)))
    ratios = [F.evaluate_horizons(_etth1_mlp(96, seed), span, [2880], window_stride=24)[2880]["mse"] / var
              for seed in SEEDS]
    lin = F.train_forecaster(jax.random.key(1), F.Linear(T, 96, key=jax.random.key(2)), _etth1()[0],
                             num_steps=ETTH1_STEPS)
    lin_mse = F.evaluate_horizons(lin, span, [2880], window_stride=24)[2880]["mse"]
    X, Y = F.make_windows(span, T, 2880, stride=24)
    base = float(jnp.mean((Y - jnp.mean(X, axis=1, keepdims=True)) ** 2))
    return ClaimResult.at_most(float(np.max(ratios)), 2.0,
                               details=f"MSE / variance: MLP seeds {', '.join(f'{v:.3f}' for v in ratios)}, "
                                       f"Linear {lin_mse / var:.3f}, window mean {base / var:.3f}; variance "
                                       f"{var:.4f}; {X.shape[0]} windows")
