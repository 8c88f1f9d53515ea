r"""Token routers for token-level routed decoding: each returns, per row, the model that produces the next token
(0 = the small model S, 1 = the large model L). Pure functions, ``jit``/``vmap``-compatible.

* Bernoulli(q_L): a synthetic router for throughput studies (TokenRouter, 2026; abstract only);
* confidence threshold: L when ``max_v p_S(v) < tau`` (She, Zheng, Liu, Wang, Xing, Yao, Ho, "Token Level
  Routing Inference System for Edge Devices", arXiv:2504.07878);
* Co-LLM gate: ``P(Z=1 | x_<t) = sigma(w . h^S_t + c)``, defer when ``> eta``; the marginal likelihood
  ``prod_t sum_z P(Z_t = z) P_z(x_t | x_<t)`` trains it (Shen, Lang, Wang, Kim, Sontag, "Learning to Decode
  Collaboratively with Multiple Language Models", ACL 2024, arXiv:2403.03870);
* R2R-style divergence classifier: a small MLP on S's hidden state and logit statistics, L regenerates the tokens
  it flags (Fu et al., "R2R: Efficiently Navigating Divergent Reasoning Paths with Small-Large Model Token
  Routing", arXiv:2505.21600).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxlab.core.citations import cites
from jaxlab.core.deprecation import renamed_kwargs
from jaxlab.core.types import Array, Float, Int, Key
from jaxlab.core.validation import as_array, check_int
from jaxlab.serving.token_router.cost_model import _check_q
from jaxlab.serving.token_router.papers import COLLM, EDGE_ROUTING, R2R, TOKEN_ROUTER

__all__ = [
    "CoLLMGate",
    "R2RParams",
    "bernoulli_router",
    "colm_gate",
    "colm_gate_prob",
    "colm_marginal_nll",
    "confidence_router",
    "init_colm_gate",
    "init_r2r",
    "r2r_router",
    "r2r_score",
]


@renamed_kwargs(batch="batch_size")
@cites(TOKEN_ROUTER)
def bernoulli_router(key: Key, batch_size: int, q_large) -> Int[Array, " batch_size"]:
    """Synthetic router: each token goes to L (1) with probability ``q_large``, else to S (0).

    Args:
      key: PRNG key.
      batch_size: number of tokens to route (static int >= 1); ``batch=`` is its deprecated name.
      q_large: probability of the large model, in ``[0, 1]`` (checked eagerly and under ``jit``).

    Returns:
      ``(batch_size,)`` int32 model indices.
    """
    batch = check_int(batch_size, "batch_size", min_value=1)
    q_large = _check_q(q_large, open_interval=False)
    return (jax.random.uniform(key, (batch,)) < q_large).astype(jnp.int32)


def _check_logits(small_logits) -> Array:
    return as_array(small_logits, "small_logits", ndim=2)


@cites(EDGE_ROUTING)
def confidence_router(small_logits: Float[Array, "b V"], tau) -> Int[Array, " b"]:
    """Confidence-threshold routing: S proposes; the token goes to L (1) when S's top probability
    ``max_v softmax(small_logits)_v < tau``, else to S (0).

    She, Zheng, Liu, Wang, Xing, Yao, Ho, "Token Level Routing Inference System for Edge Devices",
    arXiv:2504.07878.

    Args:
      small_logits: ``(b, V)`` float array, S's next-token logits for ``b`` rows.
      tau: confidence threshold in ``[0, 1]`` (checked eagerly and under ``jit``).

    Returns:
      ``(b,)`` int32 model indices.

    Raises:
      TypeError: ``small_logits`` is not a float array.
      ValueError: ``small_logits`` is not 2-d, or ``tau`` is not finite or outside ``[0, 1]``.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.serving.token_router import confidence_router
      >>> logits = jnp.array([[4.0, 0.0, 0.0], [0.5, 0.4, 0.3]])  # confident row, unsure row
      >>> confidence_router(logits, tau=0.6).tolist()
      [0, 1]
    """
    logits = _check_logits(small_logits)
    tau = _check_q(tau, "tau", open_interval=False)
    pmax = jnp.exp(jnp.max(jax.nn.log_softmax(logits, axis=-1), axis=-1))
    return (pmax < tau).astype(jnp.int32)


class CoLLMGate(NamedTuple):
    """Co-LLM deferral head ``P(Z_t = 1 | x_<t) = sigma(w . h_t + c)`` on the small model's last hidden state.

    Shen, Lang, Wang, Kim, Sontag, "Learning to Decode Collaboratively with Multiple Language Models", ACL 2024,
    arXiv:2403.03870.

    Attributes:
      w: ``(d,)`` float array, the gate weights.
      c: 0-d float array, the gate bias.
    """

    w: Float[Array, " d"]
    c: Float[Array, ""]


def init_colm_gate(key: Key, d: int, bias: float = 0.0) -> CoLLMGate:
    """Random gate ``w ~ N(0, I / d)``, ``c = bias``.

    Args:
      key: PRNG key.
      d: hidden size of the small model, an int ``>= 1``.
      bias: initial bias ``c`` (a negative bias starts the gate deferring rarely).

    Returns:
      The :class:`CoLLMGate` (default float dtype).

    Raises:
      TypeError: ``d`` is not an int.
      ValueError: ``d < 1``.
    """
    d = check_int(d, "d", min_value=1)
    return CoLLMGate(jax.random.normal(key, (d,)) / math.sqrt(d), jnp.asarray(float(bias)))


def _check_hidden(small_hidden, d: int) -> Array:
    h = as_array(small_hidden, "small_hidden", ndim=2)
    if h.shape[1] != d:
        raise ValueError(f"small_hidden has hidden size {h.shape[1]}, but the router parameters expect {d}")
    return h


@cites(COLLM)
def colm_gate_prob(gate_params: CoLLMGate, small_hidden: Float[Array, "b d"]) -> Float[Array, " b"]:
    """Co-LLM deferral probability ``P_theta(Z_t = 1 | x_<t) = sigma(w . h^S_t + c)`` (Shen et al.,
    arXiv:2403.03870).

    Args:
      gate_params: the :class:`CoLLMGate` ``(w, c)``.
      small_hidden: ``(b, d)`` float array, S's last hidden state ``h^S_t`` per row.

    Returns:
      ``(b,)`` float array of probabilities.

    Raises:
      TypeError: ``gate_params.w`` or ``small_hidden`` is not a float array.
      ValueError: ``gate_params.w`` is not 1-d, ``small_hidden`` not 2-d, or their hidden sizes differ.
    """
    w = as_array(gate_params.w, "gate_params.w", ndim=1)
    h = _check_hidden(small_hidden, w.shape[0])
    return jax.nn.sigmoid(h @ w + gate_params.c)


@cites(COLLM)
def colm_gate(gate_params: CoLLMGate, small_hidden: Float[Array, "b d"], eta) -> Int[Array, " b"]:
    """Co-LLM greedy deferral: the token goes to the assistant L (1) when ``P_theta(Z_t = 1 | x_<t) > eta``,
    else to S (0) (Shen et al., arXiv:2403.03870).

    Args:
      gate_params: the :class:`CoLLMGate` ``(w, c)``.
      small_hidden: ``(b, d)`` float array, S's last hidden state per row.
      eta: deferral threshold in ``[0, 1]`` (checked eagerly and under ``jit``).

    Returns:
      ``(b,)`` int32 model indices.

    Raises:
      TypeError: ``gate_params.w`` or ``small_hidden`` is not a float array.
      ValueError: shapes as in :func:`colm_gate_prob`, or ``eta`` not finite or outside ``[0, 1]``.
    """
    eta = _check_q(eta, "eta", open_interval=False)
    return (colm_gate_prob(gate_params, small_hidden) > eta).astype(jnp.int32)


@cites(COLLM)
def colm_marginal_nll(gate_params: CoLLMGate, small_hidden: Float[Array, "b d"], logp_small: Float[Array, " b"],
                      logp_large: Float[Array, " b"]) -> Float[Array, ""]:
    """Mean negative marginal log-likelihood of Co-LLM over ``b`` tokens (Shen et al., arXiv:2403.03870)::

        -mean_t log( sigma(-s_t) P_S(x_t | x_<t) + sigma(s_t) P_L(x_t | x_<t) ),   s_t = w . h_t + c

    computed stably with ``logaddexp`` and ``log_sigmoid``. Differentiable in ``gate_params`` (train the gate
    with optax).

    Args:
      gate_params: the :class:`CoLLMGate` ``(w, c)``.
      small_hidden: ``(b, d)`` float array, S's last hidden state per token.
      logp_small: ``(b,)`` float array, ``log P_S`` of the observed token.
      logp_large: ``(b,)`` float array, ``log P_L`` of the observed token.

    Returns:
      0-d float array, the mean negative log-likelihood.

    Raises:
      TypeError: an input is not a float array.
      ValueError: ``gate_params.w`` not 1-d, ``small_hidden`` not 2-d or of the wrong hidden size, or
        ``logp_small`` / ``logp_large`` not of shape ``(b,)``.
    """
    w = as_array(gate_params.w, "gate_params.w", ndim=1)
    h = _check_hidden(small_hidden, w.shape[0])
    ls = as_array(logp_small, "logp_small", ndim=1, shape=(h.shape[0],))
    ll = as_array(logp_large, "logp_large", ndim=1, shape=(h.shape[0],))
    s = h @ w + gate_params.c
    return -jnp.mean(jnp.logaddexp(jax.nn.log_sigmoid(-s) + ls, jax.nn.log_sigmoid(s) + ll))


class R2RParams(NamedTuple):
    """One-hidden-layer MLP of the R2R-style divergence classifier on the features ``f = [h, max log p, H(p)]``
    (``d + 2`` of them): ``score = sigma(w2 . gelu(f W1 + b1) + b2)``.

    Attributes:
      w1: ``(d + 2, k)`` float array, first-layer weights.
      b1: ``(k,)`` float array, first-layer bias.
      w2: ``(k,)`` float array, read-out weights.
      b2: 0-d float array, read-out bias.
    """

    w1: Float[Array, "f k"]
    b1: Float[Array, " k"]
    w2: Float[Array, " k"]
    b2: Float[Array, ""]


def init_r2r(key: Key, d: int, width: int = 32) -> R2RParams:
    """Random R2R-style classifier for hidden size ``d`` (input features ``d + 2``): ``W1 ~ N(0, I / (d + 2))``,
    ``w2 ~ N(0, I / width)``, zero biases.

    Args:
      key: PRNG key.
      d: hidden size of the small model, an int ``>= 1``.
      width: hidden width ``k`` of the MLP, an int ``>= 1``.

    Returns:
      The :class:`R2RParams` (default float dtype).

    Raises:
      TypeError: ``d`` or ``width`` is not an int.
      ValueError: ``d < 1`` or ``width < 1``.
    """
    d = check_int(d, "d", min_value=1)
    width = check_int(width, "width", min_value=1)
    k1, k2 = jax.random.split(key)
    f = d + 2
    return R2RParams(jax.random.normal(k1, (f, width)) / math.sqrt(f), jnp.zeros(width),
                     jax.random.normal(k2, (width,)) / math.sqrt(width), jnp.asarray(0.0))


@cites(R2R)
def r2r_score(mlp_params: R2RParams, small_hidden: Float[Array, "b d"], small_logits: Float[Array, "b V"]):
    """Divergence probability ``sigma(MLP([h, max_v log p_S(v), H(p_S)]))`` of the R2R-style classifier.

    After Fu et al., "R2R: Efficiently Navigating Divergent Reasoning Paths with Small-Large Model Token
    Routing", arXiv:2505.21600 (a small router flags the tokens L must regenerate); the feature set and the MLP
    here are **[chosen]**.

    Args:
      mlp_params: the :class:`R2RParams`.
      small_hidden: ``(b, d)`` float array, S's last hidden state per row.
      small_logits: ``(b, V)`` float array, S's next-token logits per row.

    Returns:
      ``(b,)`` float array of divergence probabilities.

    Raises:
      TypeError: an input is not a float array.
      ValueError: ``mlp_params.w1`` not 2-d, ``small_hidden`` / ``small_logits`` not 2-d, a hidden size other
        than ``w1.shape[0] - 2``, or different row counts.
    """
    w1 = as_array(mlp_params.w1, "mlp_params.w1", ndim=2)
    h = _check_hidden(small_hidden, w1.shape[0] - 2)
    logits = _check_logits(small_logits)
    if logits.shape[0] != h.shape[0]:
        raise ValueError(f"small_logits has {logits.shape[0]} rows but small_hidden has {h.shape[0]}")
    logp = jax.nn.log_softmax(logits, axis=-1)
    feats = jnp.concatenate([h, jnp.max(logp, -1, keepdims=True), -jnp.sum(jnp.exp(logp) * logp, -1, keepdims=True)],
                            axis=-1)
    z = jax.nn.gelu(feats @ w1 + mlp_params.b1)
    return jax.nn.sigmoid(z @ mlp_params.w2 + mlp_params.b2)


@cites(R2R)
def r2r_router(mlp_params: R2RParams, small_hidden: Float[Array, "b d"], small_logits: Float[Array, "b V"],
               threshold) -> Int[Array, " b"]:
    """R2R-style routing: S generates every token; tokens whose divergence score (:func:`r2r_score`) exceeds
    ``threshold`` are regenerated by L (1). Visits per token: ``v_S = 1``, ``v_L = q_L`` (Fu et al.,
    arXiv:2505.21600).

    Args:
      mlp_params: the :class:`R2RParams`.
      small_hidden: ``(b, d)`` float array, S's last hidden state per row.
      small_logits: ``(b, V)`` float array, S's next-token logits per row.
      threshold: score threshold in ``[0, 1]`` (checked eagerly and under ``jit``).

    Returns:
      ``(b,)`` int32 model indices (1 = regenerate with L).

    Raises:
      TypeError: an input is not a float array.
      ValueError: shapes as in :func:`r2r_score`, or ``threshold`` not finite or outside ``[0, 1]``.
    """
    threshold = _check_q(threshold, "threshold", open_interval=False)
    return (r2r_score(mlp_params, small_hidden, small_logits) > threshold).astype(jnp.int32)
