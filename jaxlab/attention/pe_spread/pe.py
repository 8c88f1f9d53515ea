r"""Additive positional encodings and their positional spread.

Paper: "Positional spread of additive positional encodings" (2026; title, authors and arXiv id not retrieved,
only the abstract was available), on top of Vaswani et al., "Attention is all you need", arXiv:1706.03762
(sinusoidal PE), Press, Smith & Lewis, "Train short, test long" (ALiBi), arXiv:2108.12409, and Su et al.,
"RoFormer" (RoPE), arXiv:2104.09864.

Notation. ``E`` in R^{n x d} holds the embedding ``e_i`` of position ``i = 0..n-1``; token ``i`` enters
attention as ``x_i + e_i``. With ``ē = (1/n) Σ_i e_i`` and the centring matrix ``H = I - 11ᵀ/n``,

    Ẽ = H E = E - 1ēᵀ,
    S(E) = ‖Ẽ‖_F² = Σ_i ‖e_i - ē‖² = (1/(2n)) Σ_{i,j} ‖e_i - e_j‖²          (positional spread; abstract)
    s(E) = S(E) / n                                                         (normalised spread)

``S`` is invariant to a common shift ``E + 1bᵀ`` and to ``E Q`` with ``Q`` orthogonal, and ``S(αE) = α² S(E)``.
The spread knob ``E_α = 1ēᵀ + α Ẽ`` has ``S(E_α) = α² S(E)``.

**[derived]** Sinusoidal PE with ``ω_k = base^{-2k/d}``, ``e_i[2k] = sin(ω_k i)``, ``e_i[2k+1] = cos(ω_k i)``:

    S = Σ_{k<d/2} [ n - F_n(ω_k) / n ],    F_n(ω) = |Σ_{i<n} e^{√-1 ω i}|² = sin²(nω/2) / sin²(ω/2)

(Fejér kernel; ``F_n = n²`` when ``ω`` is a multiple of 2π, so that term is 0). The spread does not depend on
the position offset (a shift rotates every (sin, cos) pair).

**[derived]** Spread-separation trade-off (the abstract's Ω(δ² n)): if ``min_{i≠j} ‖e_i - e_j‖ ≥ δ`` then
``S(E) = (1/(2n)) Σ_{i≠j} ‖e_i - e_j‖² ≥ (n - 1) δ² / 2``, with equality for the regular simplex.

Score-based encodings act on attention scores instead. ALiBi adds ``B_ij = -m_h |i - j|`` (bidirectional) or
``-m_h (i - j)`` for ``j ≤ i`` and ``-∞`` above the diagonal (causal), slopes ``m_h = 2^{-8h/H}``; RoPE rotates
the query/key pair ``(2k, 2k+1)`` at position ``i`` by ``i θ_k``, ``θ_k = base^{-2k/d}``. **[recommended]**
displacement diagnostics (comparisons, not bounds): for a bias matrix
``S_disp = (1/n²) Σ_{i,j} (B_ij - B̄)²``; for RoPE the summed circular variance of the rotation angles,
``Σ_k [1 - |mean_{i,j} e^{√-1 θ_k (i-j)}|²] = Σ_k [1 - (F_n(θ_k)/n²)²]``.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from jaxlab.attention.pe_spread.papers import ALIBI, ROPE, SPREAD, VASWANI
from jaxlab.core.citations import cites
from jaxlab.core.validation import as_array, check_int, check_positive, value_check
from jaxlab.kernels import safe_sqrt, sqdist

__all__ = [
    "alibi_bias",
    "alibi_slopes",
    "center_pe",
    "displacement_spread",
    "learned_pe_init",
    "min_separation",
    "normalized_spread",
    "rope",
    "rope_displacement_spread",
    "scale_spread",
    "sinusoidal_pe",
    "spread",
    "spread_closed_form_sinusoidal",
    "spread_lower_bound",
    "spread_penalty",
]


def _pe(E, name: str = "E") -> Array:
    """Validate a PE matrix: 2-D, real floating, finite (when concrete)."""
    return as_array(E, name, ndim=2, finite=True)


def _even_dim(d, name: str) -> int:
    d = check_int(d, name, min_value=2)
    if d % 2:
        raise ValueError(f"{name} must be even (sin/cos or rotation pairs), got {d}")
    return d


def _output_dtype(dtype, *inputs):
    """``dtype`` when given; else the dtype of the floating array inputs (``None`` entries skipped), and float32
    when there are none (integer sizes, Python scalars): the dtype these constructors have always returned."""
    if dtype is not None:
        return jnp.dtype(dtype)
    floats = [a.dtype for a in inputs if hasattr(a, "dtype") and jnp.issubdtype(a.dtype, jnp.floating)]
    return jnp.result_type(*floats) if floats else jnp.dtype(jnp.float32)


def _frequencies(d: int, base, dtype) -> Array:
    """``base^{-2k/d}`` for ``k = 0..d/2-1``."""
    base = check_positive(base, "base")
    k = jnp.arange(d // 2, dtype=dtype)
    return jnp.asarray(base, dtype) ** (-2.0 * k / d)


def _fejer(n: int, omega: Array) -> Array:
    """``F_n(ω) = |Σ_{i<n} e^{√-1 ω i}|² = sin²(nω/2)/sin²(ω/2)``, equal to ``n²`` at multiples of 2π."""
    s = jnp.sin(omega / 2)
    small = jnp.abs(s) < 1e3 * jnp.finfo(omega.dtype).eps
    safe = jnp.where(small, 1.0, s)
    return jnp.where(small, float(n) ** 2, jnp.sin(n * omega / 2) ** 2 / safe**2)


def _fejer_of_frequencies(n, d, base, dtype) -> tuple[int, Array]:
    """Validated ``n`` and ``F_n(ω_k)`` for the ``d/2`` frequencies ``ω_k = base^{-2k/d}``."""
    n = check_int(n, "n", min_value=1)
    d = _even_dim(d, "d")
    return n, _fejer(n, _frequencies(d, base, dtype or jnp.result_type(float)))


@cites(VASWANI, SPREAD)
def sinusoidal_pe(n: int, d: int, base: float = 10000.0, offset=0, dtype=None) -> Float[Array, "n d"]:
    """Sinusoidal PE table: ``e_i[2k] = sin(ω_k i)``, ``e_i[2k+1] = cos(ω_k i)``, ``ω_k = base^{-2k/d}``.

    Rows are the positions ``i = offset, ..., offset + n − 1`` (Vaswani et al., "Attention Is All You Need",
    arXiv:1706.03762). Its spread has the closed form :func:`spread_closed_form_sinusoidal` and does not depend
    on ``offset``.

    Args:
      n: number of positions (static int ``≥ 1``).
      d: embedding dimension (static even int ``≥ 2``).
      base: the frequency base, a positive finite float.
      offset: the first position, an int or float (may be a traced scalar).
      dtype: output dtype; ``None`` follows a floating ``offset`` array and is float32 otherwise.

    Returns:
      ``(n, d)`` float array.

    Raises:
      TypeError: ``n`` or ``d`` is not an int.
      ValueError: ``n < 1``; ``d`` odd or ``< 2``; ``base`` not positive and finite.

    Example:
      >>> from jaxlab.attention.pe_spread import sinusoidal_pe, spread, spread_closed_form_sinusoidal
      >>> E = sinusoidal_pe(64, 16)
      >>> round(float(spread(E)), 2), round(float(spread_closed_form_sinusoidal(64, 16)), 2)
    """
    n = check_int(n, "n", min_value=1)
    d = _even_dim(d, "d")
    dtype = _output_dtype(dtype, offset)
    omega = _frequencies(d, base, dtype)
    pos = jnp.asarray(offset, dtype) + jnp.arange(n, dtype=dtype)
    ang = pos[:, None] * omega[None, :]
    return jnp.stack([jnp.sin(ang), jnp.cos(ang)], axis=-1).reshape(n, d)


@cites(SPREAD)
def learned_pe_init(key, n_max: int, d: int, std: float = 0.02, dtype=None) -> Float[Array, "n_max d"]:
    """A learned PE table initialised i.i.d. ``N(0, std²)`` **[recommended]**.

    Args:
      key: PRNG key.
      n_max: number of positions (int ``≥ 1``), the longest sequence the table serves.
      d: embedding dimension (int ``≥ 1``).
      std: the standard deviation, a positive finite float (or 0-d array).
      dtype: output dtype; ``None`` follows a floating ``std`` array and is float32 otherwise.

    Returns:
      ``(n_max, d)`` float array.

    Raises:
      TypeError: ``n_max`` or ``d`` is not an int.
      ValueError: ``n_max < 1``, ``d < 1``, or ``std`` not positive and finite.
    """
    n_max = check_int(n_max, "n_max", min_value=1)
    d = check_int(d, "d", min_value=1)
    dtype = _output_dtype(dtype, std)
    std = check_positive(std, "std")
    return std * jax.random.normal(key, (n_max, d), dtype=dtype)


@cites(SPREAD)
def center_pe(E: Float[Array, "n d"]) -> Float[Array, "n d"]:
    """The centred table ``Ẽ = H E = E − 1ēᵀ``, ``ē = (1/n) Σ_i e_i``.

    The only part of an additive PE that breaks the permutation symmetry of mean-pooled attention (the
    invariance lemma of :mod:`jaxlab.attention.pe_spread.attention`).

    Args:
      E: ``(n, d)`` finite float array, the PE table (row ``i`` is the embedding ``e_i`` of position ``i``).

    Returns:
      ``(n, d)`` float array ``Ẽ``, with zero column means.

    Raises:
      TypeError: ``E`` is not a floating array.
      ValueError: ``E`` is not 2-d or has a non-finite entry.
    """
    E = _pe(E)
    return E - jnp.mean(E, axis=0, keepdims=True)


@cites(SPREAD)
def spread(E: Float[Array, "n d"]) -> Float[Array, ""]:
    """Positional spread ``S(E) = ‖H E‖_F² = Σ_i ‖e_i − ē‖² = (1/(2n)) Σ_{i,j} ‖e_i − e_j‖²``.

    The quantity of "Positional spread of additive positional encodings" (2026; authors and arXiv id unknown, only the
    abstract was available). ``S`` is invariant to a common shift ``E + 1bᵀ`` and to ``E Q`` for orthogonal
    ``Q``, and ``S(αE) = α² S(E)``.

    Args:
      E: ``(n, d)`` finite float array, the PE table (row ``i`` is the embedding ``e_i`` of position ``i``).

    Returns:
      0-d float array ``S(E) ≥ 0``.

    Raises:
      TypeError: ``E`` is not a floating array.
      ValueError: ``E`` is not 2-d or has a non-finite entry.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.attention.pe_spread import scale_spread, spread
      >>> E = jax.random.normal(jax.random.key(0), (16, 8))
      >>> bool(jnp.isclose(spread(scale_spread(E, 0.5)), 0.25 * spread(E)))
      True
    """
    return jnp.sum(center_pe(E) ** 2)


@cites(SPREAD)
def normalized_spread(E: Float[Array, "n d"]) -> Float[Array, ""]:
    """Normalised spread ``s(E) = S(E) / n``, the per-position variance (to compare tables of different lengths).

    Args:
      E: ``(n, d)`` finite float array, the PE table (row ``i`` is the embedding ``e_i`` of position ``i``).

    Returns:
      0-d float array ``s(E)``.

    Raises:
      TypeError: ``E`` is not a floating array.
      ValueError: ``E`` is not 2-d or has a non-finite entry.
    """
    E = _pe(E)
    return spread(E) / E.shape[0]


@cites(VASWANI, SPREAD)
def spread_closed_form_sinusoidal(n: int, d: int, base: float = 10000.0, dtype=None) -> Float[Array, ""]:
    """**[derived]** Spread of the sinusoidal PE of length ``n``: ``S = Σ_{k<d/2} [n − F_n(ω_k)/n]``.

    ``F_n(ω) = |Σ_{i<n} e^{√-1 ω i}|² = sin²(nω/2)/sin²(ω/2)`` is the Fejér kernel (``n²`` at multiples of
    ``2π``), ``ω_k = base^{-2k/d}``. Each (sin, cos) pair contributes ``n − |Σ_i e^{√-1 ω_k i}|²/n``.

    Args:
      n: number of positions (int ``≥ 1``).
      d: embedding dimension (even int ``≥ 2``).
      base: the frequency base, a positive finite float.
      dtype: dtype of the computation; ``None`` is the default float dtype (float64 with x64 on).

    Returns:
      0-d float array, equal to ``spread(sinusoidal_pe(n, d, base))`` up to rounding.

    Raises:
      TypeError: ``n`` or ``d`` is not an int.
      ValueError: ``n < 1``; ``d`` odd or ``< 2``; ``base`` not positive and finite.
    """
    n, F = _fejer_of_frequencies(n, d, base, dtype)
    return jnp.sum(n - F / n)


@cites(SPREAD)
def spread_penalty(E: Float[Array, "n d"], lam) -> Float[Array, ""]:
    """**[recommended]** Spread regulariser ``λ S(E)/n``, with gradient ``(2λ/n) Ẽ``.

    Args:
      E: ``(n, d)`` finite float array, the PE table (row ``i`` is the embedding ``e_i`` of position ``i``).
      lam: the weight ``λ ≥ 0``, a finite float or 0-d array.

    Returns:
      0-d float array ``λ S(E)/n``.

    Raises:
      TypeError: ``E`` is not a floating array.
      ValueError: ``E`` is not 2-d or has a non-finite entry; ``lam`` negative or not finite.
    """
    lam = check_positive(lam, "lam", strict=False)
    return lam * normalized_spread(E)


@cites(SPREAD)
def scale_spread(E: Float[Array, "n d"], alpha) -> Float[Array, "n d"]:
    """Spread knob ``E_α = 1ēᵀ + α Ẽ``: keeps the mean row and scales the spread, ``S(E_α) = α² S(E)``.

    Args:
      E: ``(n, d)`` finite float array, the PE table (row ``i`` is the embedding ``e_i`` of position ``i``).
      alpha: the factor ``α ≥ 0``, a finite float or 0-d array (``α = 0`` gives the constant table ``1ēᵀ``).

    Returns:
      ``(n, d)`` float array ``E_α``.

    Raises:
      TypeError: ``E`` is not a floating array.
      ValueError: ``E`` is not 2-d or has a non-finite entry; ``alpha`` negative or not finite.
    """
    alpha = check_positive(alpha, "alpha", strict=False)
    E = _pe(E)
    mean = jnp.mean(E, axis=0, keepdims=True)
    return mean + alpha * (E - mean)


@cites(SPREAD)
def min_separation(E: Float[Array, "n d"], chunk_size: int = 1024) -> Float[Array, ""]:
    """Minimum separation ``δ(E) = min_{i<j} ‖e_i − e_j‖`` of the rows of a PE table.

    Computed in row blocks of ``chunk_size`` (memory ``O(chunk_size · n)``): each block finds every row's nearest
    other row with :func:`jaxlab.kernels.sqdist` (the Gram trick) and then recomputes that pair's distance from
    the difference, so near-coincident rows do not lose their digits. Enters the bound
    :func:`spread_lower_bound`.

    Args:
      E: ``(n, d)`` finite float array, the PE table (row ``i`` is the embedding ``e_i`` of position ``i``).
      chunk_size: rows per block (int ``≥ 1``).

    Returns:
      0-d float array ``δ(E) ≥ 0``.

    Raises:
      TypeError: ``E`` is not floating; ``chunk_size`` is not an int.
      ValueError: ``E`` is not 2-d, has a non-finite entry or fewer than 2 rows; ``chunk_size < 1``.
    """
    E = _pe(E)
    n = E.shape[0]
    if n < 2:
        raise ValueError(f"min_separation needs E with at least 2 rows (positions), got shape {E.shape}")
    c = min(check_int(chunk_size, "chunk_size", min_value=1), n)
    blocks = -(-n // c)
    idx = jnp.arange(blocks * c).reshape(blocks, c)
    cols = jnp.arange(n)

    def block_min(rows_idx):
        rows = E[jnp.minimum(rows_idx, n - 1)]
        d2 = jnp.where(rows_idx[:, None] == cols[None, :], jnp.inf, sqdist(rows, E))
        nearest = E[jnp.argmin(d2, axis=1)]
        exact = jnp.sum((rows - nearest) ** 2, axis=-1)
        return jnp.min(jnp.where(rows_idx < n, exact, jnp.inf))

    return safe_sqrt(jnp.min(jax.lax.map(block_min, idx)))


@cites(SPREAD)
def spread_lower_bound(n: int, delta) -> Float[Array, ""]:
    """**[derived]** Spread–separation bound: ``S(E) ≥ (n − 1) δ² / 2`` for every ``E`` with ``n`` rows ``δ`` apart.

    From ``S(E) = (1/(2n)) Σ_{i≠j} ‖e_i − e_j‖²`` with every term ``≥ δ²``; equality for the regular simplex. The
    ``Ω(δ² n)`` trade-off stated in the abstract of "Positional spread of additive positional encodings" (2026;
    authors and arXiv id unknown); the constant is derived here.

    Args:
      n: number of rows (int ``≥ 2``).
      delta: the separation ``δ > 0``, a float or 0-d array.

    Returns:
      0-d float array ``(n − 1) δ² / 2``.

    Raises:
      TypeError: ``n`` is not an int.
      ValueError: ``n < 2``; ``delta`` not positive and finite, or not a scalar.
    """
    n = check_int(n, "n", min_value=2)
    delta = check_positive(delta, "delta")
    delta = as_array(delta, "delta", ndim=0)
    return 0.5 * (n - 1) * delta**2


@cites(ALIBI)
def alibi_slopes(num_heads: int, dtype=None) -> Float[Array, " H"]:
    """ALiBi head slopes ``m_h = 2^{-8h/H}``, ``h = 1..H`` (Press, Smith and Lewis, "Train Short, Test Long",
    arXiv:2108.12409).

    For ``H`` not a power of two, ALiBi's own rule: the slopes of the largest power of two ``p < H``, then every
    other slope of ``2p`` heads (the odd ``h``) until ``H`` slopes are listed.

    Args:
      num_heads: the number of heads ``H`` (int ``≥ 1``).
      dtype: output dtype; ``None`` is float32 (there is no floating input to follow).

    Returns:
      ``(H,)`` float array of slopes in ``(0, 1)``.

    Raises:
      TypeError: ``num_heads`` is not an int.
      ValueError: ``num_heads < 1``.
    """
    H = check_int(num_heads, "num_heads", min_value=1)

    def power_of_two(p):
        return [2.0 ** (-8.0 * h / p) for h in range(1, p + 1)]

    p = 1 << (H.bit_length() - 1)
    slopes = power_of_two(p) + power_of_two(2 * p)[0::2][: H - p]
    return jnp.asarray(slopes, _output_dtype(dtype))


@cites(ALIBI)
def alibi_bias(n: int, num_heads: int, causal: bool = False, dtype=None) -> Float[Array, "H n n"]:
    """ALiBi score bias ``B[h, i, j] = −m_h |i − j|``; causal: ``−m_h (i − j)`` for ``j ≤ i`` and ``−∞`` above.

    ``m_h`` from :func:`alibi_slopes` (Press, Smith and Lewis, arXiv:2108.12409). Added to the attention scores
    (``bias`` of :func:`attention_heads`).

    Args:
      n: sequence length (int ``≥ 1``).
      num_heads: the number of heads ``H`` (int ``≥ 1``).
      causal: mask the future (``j > i``) with ``−∞``.
      dtype: output dtype; ``None`` is float32 (there is no floating input to follow).

    Returns:
      ``(H, n, n)`` float array.

    Raises:
      TypeError: ``n`` or ``num_heads`` is not an int.
      ValueError: ``n < 1`` or ``num_heads < 1``.
    """
    n = check_int(n, "n", min_value=1)
    dtype = _output_dtype(dtype)
    m = alibi_slopes(num_heads, dtype)
    i = jnp.arange(n)[:, None]
    j = jnp.arange(n)[None, :]
    dist = jnp.abs(i - j).astype(dtype)
    bias = -m[:, None, None] * dist[None]
    if causal:
        bias = jnp.where((j <= i)[None], bias, -jnp.inf)
    return bias


@cites(ROPE)
def rope(x: Float[Array, "... n d"], positions, base: float = 10000.0) -> Float[Array, "... n d"]:
    """Rotary position embedding: rotate the pair ``(x[2k], x[2k+1])`` at position ``p_i`` by the angle ``p_i θ_k``.

    ``θ_k = base^{-2k/d}``: ``(x[2k], x[2k+1]) ↦ (x[2k] cos − x[2k+1] sin, x[2k] sin + x[2k+1] cos)`` (Su et al.,
    "RoFormer: Enhanced Transformer with Rotary Position Embedding", arXiv:2104.09864). Scores of rotated
    queries and keys depend on positions only through ``p_i − p_j``.

    Args:
      x: ``(..., n, d)`` float array (2 to 7 dimensions, ``d`` even), e.g. per-head queries ``(H, n, d_k)``.
      positions: ``(n,)`` int or float array of positions ``p_i``.
      base: the frequency base, a positive finite float.

    Returns:
      Float array of the shape and dtype of ``x``.

    Raises:
      TypeError: ``x`` is not floating or ``positions`` not numeric.
      ValueError: ``x`` has fewer than 2 or more than 7 dimensions or an odd last axis; ``positions`` is not
        ``(n,)``; ``base`` not positive and finite.
    """
    x = as_array(x, "x", ndim=tuple(range(2, 8)))
    n, d = x.shape[-2:]
    _even_dim(d, "the last axis of x")
    positions = as_array(positions, "positions", ndim=1, kind="number")
    if positions.shape[0] != n:
        raise ValueError(f"positions must have length n={n} (x.shape[-2]), got shape {positions.shape}")
    theta = _frequencies(d, base, x.dtype)
    ang = positions.astype(x.dtype)[:, None] * theta[None, :]
    cos, sin = jnp.cos(ang), jnp.sin(ang)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return jnp.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], axis=-1).reshape(x.shape)


@cites(ALIBI, SPREAD)
def displacement_spread(bias: Float[Array, "... n n"] | Callable[[Array], Array], n: int | None = None) -> Array:
    """**[recommended]** Displacement diagnostic of a score bias: ``S_disp = (1/n²) Σ_{i,j} (B_ij − B̄)²``.

    A comparison for score-based encodings (not a bound), ``B̄`` the mean entry, computed per leading index.

    Args:
      bias: a finite float matrix ``(..., n, n)`` (for example :func:`alibi_bias`, bidirectional: a causal
        ``−∞`` is rejected), or a function ``b`` of the int displacement matrix ``i − j`` returning ``(n, n)``.
      n: the sequence length; required when ``bias`` is a function, else optional and checked.

    Returns:
      Float array of shape ``bias.shape[:-2]`` (0-d for one matrix or a function).

    Raises:
      TypeError: ``bias`` (or its value) is not floating; ``n`` is not an int.
      ValueError: ``bias`` is a function and ``n`` is None or ``< 1``; the matrix is not square in its last two
        axes or not of size ``n``; a non-finite entry.
    """
    if callable(bias):
        if n is None:
            raise ValueError("n must be given when bias is a function of the displacement i - j, got None")
        n = check_int(n, "n", min_value=1)
        disp = jnp.arange(n)[:, None] - jnp.arange(n)[None, :]
        B = as_array(bias(disp), "bias(i - j)", shape=(n, n))
    else:
        B = as_array(bias, "bias", ndim=tuple(range(2, 8)))
        if B.shape[-1] != B.shape[-2] or (n is not None and B.shape[-1] != n):
            raise ValueError(f"bias must have square trailing axes (n, n), got shape {B.shape}")
    B = value_check(B, lambda b: ~jnp.isfinite(b),
                    "bias must be finite (use the bidirectional bias, a causal -inf has no variance)")
    return jnp.mean((B - jnp.mean(B, axis=(-2, -1), keepdims=True)) ** 2, axis=(-2, -1))


@cites(ROPE, SPREAD)
def rope_displacement_spread(n: int, d: int, base: float = 10000.0, dtype=None) -> Float[Array, ""]:
    """**[recommended]** RoPE diagnostic: the summed circular variance of the rotation angles over the ``n × n`` grid.

    ``Σ_k [1 − |mean_{i,j} e^{√-1 θ_k (i−j)}|²] = Σ_k [1 − (F_n(θ_k)/n²)²]``, ``θ_k = base^{-2k/d}``, ``F_n`` the
    Fejér kernel (see :func:`spread_closed_form_sinusoidal`). A comparison, not a bound.

    Args:
      n: sequence length (int ``≥ 1``).
      d: head dimension (even int ``≥ 2``).
      base: the frequency base, a positive finite float.
      dtype: dtype of the computation; ``None`` is the default float dtype.

    Returns:
      0-d float array in ``[0, d/2]``.

    Raises:
      TypeError: ``n`` or ``d`` is not an int.
      ValueError: ``n < 1``; ``d`` odd or ``< 2``; ``base`` not positive and finite.
    """
    n, F = _fejer_of_frequencies(n, d, base, dtype)
    return jnp.sum(1.0 - (F / n**2) ** 2)
