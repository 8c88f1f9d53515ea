"""Claims of the shared primitives (area ``core``): kernels, discrepancies, sharding and the scan driver."""

from __future__ import annotations

import contextlib
import io
import math
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.loop import run
from jaxlab.core.quadrature import gaussian_rule
from jaxlab.core.verification import ClaimResult, by_precision, claim
from jaxlab.kernels import gram, mmd2, pairwise_distance_quantile, stein_gram

TITLE = "Shared primitives: kernels, MMD/KSD/energy distance, scan driver, sharding"
MODULES = ("jaxlab.kernels", "jaxlab.core")


def _sample(seed: int, n: int, d: int):
    return jax.random.normal(jax.random.key(seed), (n, d))


@claim(area="core", paper="gretton2012mmd")
def mmd_of_a_weighted_sample_with_itself_is_zero() -> ClaimResult:
    """Weighted MMD² of two different weighted samples (X: 64 points in R³, Dirichlet weights; Y: 48 shifted and
    scaled points, other Dirichlet weights; Gaussian kernel, ℓ = 0.7) equals an independent float64 double loop
    Σ_ij wx_i wx_j k(x_i, x_j) − 2 Σ_ij wx_i wy_j k(x_i, y_j) + Σ_ij wy_i wy_j k(y_i, y_j) with
    k(x, y) = exp(−‖x − y‖²/(2ℓ²)) written out here (no jaxlab code), to 1e-13 (float64) / 32 eps32 (float32) times
    the sum of the three terms' magnitudes; and MMD²(μ, μ) of X with itself is at most 1e-13. Measured:
    |MMD² − reference|."""
    X = _sample(0, 64, 3)
    Y = 0.8 * _sample(2, 48, 3) + jnp.array([0.3, -0.2, 0.1])
    wx = jax.random.dirichlet(jax.random.key(1), jnp.ones(64))
    wy = jax.random.dirichlet(jax.random.key(3), jnp.ones(48))
    ell = 0.7
    got = float(mmd2(X, wx, Y, wy, lengthscale=ell))
    self_mmd = float(mmd2(X, wx, X, wx, lengthscale=ell))

    def term(A, wa, B, wb):
        A, B = np.asarray(A, np.float64), np.asarray(B, np.float64)
        wa, wb = np.asarray(wa, np.float64), np.asarray(wb, np.float64)
        total = mag = 0.0
        for i in range(len(A)):
            for j in range(len(B)):
                d2 = sum((A[i, c] - B[j, c]) ** 2 for c in range(A.shape[1]))
                t = wa[i] * wb[j] * math.exp(-d2 / (2.0 * ell**2))
                total += t
                mag += abs(t)
        return total, mag

    (kxx, mxx), (kxy, mxy), (kyy, myy) = term(X, wx, X, wx), term(X, wx, Y, wy), term(Y, wy, Y, wy)
    want, scale = kxx - 2.0 * kxy + kyy, mxx + 2.0 * mxy + myy
    # float64: the three sums of ≤ 64² terms, each exact to a few ulps, agree to ~1e-16 scale; 1e-13 scale leaves room
    # for blocked summation orders. float32: each kernel entry k = exp(−u) errs by ≲ (|u| + 2) eps32 with u = d²/(2ℓ²)
    # computed as |x|² + |y|² − 2 x·y (cancellation: ~ (|x|² + |y|²)/(2ℓ²) eps32 ≲ 10 eps32 here; d² ≲ 16 and the
    # weights' exp(−u) shrink far pairs), the weighted sums add log2(64²) = 12 levels: ≲ 32 eps32 · scale
    tol = by_precision(1e-13, 32 * 2.0**-23) * scale
    err = abs(got - want)
    ok = err <= tol and abs(self_mmd) <= 1e-13  # μ against itself: every term cancels exactly, as before
    return ClaimResult(float(err), f"<= {tol:.3g} (and |MMD²(μ, μ)| <= 1e-13)", float(tol), bool(ok),
                       f"MMD² {got:.10g} vs double loop {want:.10g} (terms {kxx:.6f}, {kxy:.6f}, {kyy:.6f}); "
                       f"MMD²(μ, μ) {self_mmd:.2e}")


@claim(area="core", paper="gretton2012mmd")
def gaussian_gram_is_psd() -> ClaimResult:
    """The Gaussian Gram matrix of distinct points is PSD: smallest eigenvalue >= -1e-12 (float64)."""
    X = _sample(2, 200, 2)
    lam = jnp.linalg.eigvalsh(gram(X, lengthscale=1.5))
    lam_min = float(lam.min())
    # float32: eigvalsh is backward stable, |lam_hat - lam| <= p(n) eps32 lam_max; with the entries' own rounding
    # take p(n) = sqrt(n) = sqrt(200): bound -sqrt(200) eps32 lam_max (lam_max ~ 111: ~ -1.9e-4)
    bound = by_precision(-1e-12, -math.sqrt(200) * 2.0**-23 * float(lam.max()))
    return ClaimResult.at_least(lam_min, bound, details="smallest eigenvalue of K (200 points, d=2)")


@claim(area="core", paper="gretton2012mmd")
def mmd_between_gaussians_matches_closed_form() -> ClaimResult:
    """Weighted MMD² between Gauss-Hermite rules of N(a, s²I) and N(b, t²I) equals the closed form

    E k(X, Y) = (ℓ²/(ℓ² + s² + t²))^{d/2} exp(-||a - b||² / (2(ℓ² + s² + t²))) for the Gaussian kernel."""
    d, ell, s, t = 2, 1.3, 0.8, 1.1
    a, b = jnp.array([0.0, 0.5]), jnp.array([1.0, -0.3])
    X, wx = gaussian_rule(a, s**2 * jnp.eye(d), 24)
    Y, wy = gaussian_rule(b, t**2 * jnp.eye(d), 24)

    def ek(m1, v1, m2, v2):
        v = ell**2 + v1 + v2
        return (ell**2 / v) ** (d / 2) * math.exp(-float(jnp.sum((m1 - m2) ** 2)) / (2 * v))

    exact = ek(a, s**2, a, s**2) - 2 * ek(a, s**2, b, t**2) + ek(b, t**2, b, t**2)
    measured = mmd2(X, wx, Y, wy, lengthscale=ell)
    # float32: Exx - 2 Exy + Eyy, weights |1| + |-2| + |1| = 4 on weighted means (weights sum to 1) of kernel values
    # in [0, 1]; each mean is a matrix-vector product then a dot, 24^2 = 576 terms each, summed blockwise:
    # <= 2 log2(576) eps32 ~ 18.3 eps32 per mean, so |error| <= 4 * 18.3 eps32 ~ 8.7e-6
    atol = by_precision(0.0, 4 * 2 * math.log2(576) * 2.0**-23)
    return ClaimResult.close(measured, exact, rtol=by_precision(1e-10, 0.0), atol=atol)


@claim(area="core", paper="liu2016ksd")
def stein_kernel_has_zero_mean_under_the_target() -> ClaimResult:
    """Stein identity: E_{x~π}[k_π(x, y)] = 0 for every y, π = N(m, S) (Gauss-Hermite, 40 nodes per dim)."""
    m = jnp.array([0.3, -1.0])
    S = jnp.array([[1.0, 0.4], [0.4, 0.7]])
    P = jnp.linalg.inv(S)
    X, w = gaussian_rule(m, S, 40)
    Y = _sample(3, 5, 2)
    score = lambda Z: -(Z - m) @ P  # noqa: E731
    K = stein_gram(X, score(X), Y, score(Y), lengthscale=0.9)
    # float32: each w @ K[:, y] is a blockwise sum of 40^2 = 1600 terms cancelling to 0: |error| <= log2(1600) eps32
    # sum_i w_i |K_iy| (that scale ~ 1.5 here: ~ 1.9e-6)
    bound = by_precision(1e-10, math.log2(1600) * 2.0**-23 * float(jnp.max(jnp.abs(w) @ jnp.abs(K))))
    return ClaimResult.at_most(float(jnp.max(jnp.abs(w @ K))), bound, details="max over 5 points y")


@claim(area="core", paper="gretton2012mmd")
def distance_quantile_by_selection_matches_sort() -> ClaimResult:
    """The sort-free (bisection) distance quantile equals numpy's linear-rule quantile."""
    X = np.asarray(_sample(4, 61, 3))
    iu = np.triu_indices(61, 1)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))[iu]
    qs = (0.0, 0.1, 0.5, 0.77, 1.0)
    errs = [abs(float(pairwise_distance_quantile(X, q)) - np.quantile(D, q)) for q in qs]
    # float32: the Gram trick's D^2 = |x|^2 + |y|^2 - 2 x.y on centred points (radius^2 <= R2) is off by
    # <= (d + 2) eps32 2 R2, so D by <= 5 eps32 R2 / D, and the direct reference by eps32 D: worst over the q's
    R2 = float(np.max(np.sum((X - X.mean(0)) ** 2, axis=1)))
    bound = by_precision(1e-12, max(5 * 2.0**-23 * R2 / np.quantile(D, q) + 2.0**-23 * np.quantile(D, q) for q in qs))
    return ClaimResult.at_most(max(errs), bound)


@claim(area="core", paper="gretton2012mmd")
def progress_meter_leaves_results_unchanged() -> ClaimResult:
    """``run(..., progress=True)`` gives the same trajectory as ``progress=False`` (to the last bit or two)."""

    def step(key, x):
        x = 0.9 * x + 0.1 * jax.random.normal(key, x.shape)
        return x, jnp.sum(x**2)

    x0 = jnp.ones(4)
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        outs = [jax.jit(lambda k, p=p: run(step, x0, k, 40, thin=4, progress=p))(jax.random.key(5))
                for p in (False, True)]
        jax.effects_barrier()
    if "40/40" not in buf.getvalue():
        return ClaimResult(float("nan"), 0.0, 0.0, False, "the progress meter printed nothing")
    diff = max(float(jnp.max(jnp.abs(a - b) / jnp.maximum(jnp.abs(b), 1e-300)))
               for a, b in zip(jax.tree.leaves(outs[0]), jax.tree.leaves(outs[1]), strict=True))
    return ClaimResult.at_most(diff, 1e-14, details="max relative difference, progress on vs off")


_SHARDED_SCRIPT = r"""
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
from jaxlab.core.sharding import sharded_vmap
from jaxlab.kernels import mmd2
assert len(jax.devices()) == 8, jax.devices()
keys = jax.random.split(jax.random.key(0), 13)
X = jax.vmap(lambda k: jax.random.normal(k, (32, 3)))(keys)
Y = jax.random.normal(jax.random.key(1), (40, 3)) + 0.3
f = lambda x, y: mmd2(x, None, y, None, lengthscale=1.0)
a = sharded_vmap(f, in_axes=(0, None))(X, Y)
b = jax.vmap(f, in_axes=(0, None))(X, Y)
print(float(jnp.max(jnp.abs(a - b))))
"""


@claim(area="core", paper="gretton2012mmd")
def sharded_batch_equals_unsharded() -> ClaimResult:
    """A batch of 13 MMD² evaluations sharded over 8 simulated CPU devices equals the plain vmap."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", _SHARDED_SCRIPT], env=env, capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        return ClaimResult(float("nan"), 0.0, 1e-14, False, out.stderr[-500:])
    return ClaimResult.at_most(float(out.stdout.strip().splitlines()[-1]), 1e-14)
