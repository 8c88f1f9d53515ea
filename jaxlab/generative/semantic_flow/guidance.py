"""SemanticFlow: tuning-free customization of a rectified-flow transformer with semantic perception (read-only
probe token streams) and energy-guided rectification of the early sampling steps.

Paper: "SemanticFlow: Tuning-Free Customization with Semantic Perception and Energy-Guided Rectification" (2026),
known only through its abstract: authors, arXiv id and code were not located. Everything below is our
reconstruction from the abstract and the guidance literature it builds on (Attend-and-Excite arXiv:2301.13826,
layout guidance arXiv:2304.03373, self-guidance arXiv:2306.00986, FlowChef arXiv:2412.00100, OminiControl
arXiv:2411.15098); parts marked **[chosen]** are design choices, kept as configuration.

What was reconstructed, and how. The abstract names two mechanisms: "lightweight semantic token streams as
run-time probes to accurately perceive the spatial responses of the target semantics", and "semantic
manipulation as an energy-guided rectification of these semantic responses within the rectified flow
framework" at "the early denoising stage". The first became extra tokens that ride through the MM-DiT with
frozen weights and read attention maps without changing the output (extra token streams as in OminiControl,
attention read-outs as in self-guidance). The second became an energy on those maps built from Attend-and-Excite's
excitation term and layout guidance's inside/outside-mask terms, descended by normalised gradient steps on the
latent before the first Euler steps (FlowChef-style gradient steering of a rectified flow).

Perception **[chosen]**: ``P`` probe tokens ``s_p`` are copies of the initial text-stream state of chosen prompt
words (subject / context) and of the mean reference-stream state inside the reference subject mask (visual).
They ride along through the frozen MM-DiT (:class:`~.mmdit.TinyMMDiT`), processed with
the weights of the stream they were copied from, read-only: no real query sees a probe key, so the velocity is
bit-identical with or without probes. Response map of probe ``p`` at block ``b``, head ``h``, noise ``sigma``:

    R_p^{b,h} = softmax_i(q_p^{b,h} . k_{x,i}^{b,h} / sqrt(d_h)),   i = 1..Nx (image tokens),
    R_p = mean_{b in B, h} R_p^{b,h}   (optionally 3x3 Gaussian-smoothed on the token grid, renormalised).

Soft masks **[chosen]**: ``M_p = sg(sigmoid(kappa (clip((R_p - min)/(max - min), 0, 1) - tau)))``.
Energy **[chosen]**:

    E_align  = (1 - sum_i R_vis(i) M_subj(i) / sum_i R_vis(i))^2
    E_excite = sum_{p text} (1 - max_i Rt_p(i))^2,   Rt_p(i) = R_p(i) / sum_{q text} R_q(i)
    E_leak   = sum_{j ctx} sum_i R_vis(i) M_ctx_j(i)
    E = lam_a E_align + lam_e E_excite + lam_l E_leak        (defaults 1, 0.5, 0.5).

Normalisation: the per-probe form ``Rt = R / max_i R`` has maximum identically 1 (so ``E_excite == 0``); we use
Attend-and-Excite's normalisation across the text probes at each location instead. With a single text probe
``E_excite`` is 0.

Energy-guided rectification inside the Euler sampler, on the first ``ceil(rho N)`` steps only:

    repeat n_inner times:  g = grad_x E(R(x, sigma_i)),   x <- x - eta0 sigma_i g / (rms(g) + 1e-8)
    x <- x + (sigma_{i+1} - sigma_i) v_theta(x, sigma_i, c, ref)

(velocity form: ``v' = v + (eta0 sigma / dsigma) g / rms(g)``). The gradient runs the model only up to
``max(blocks)``. If an energy or its gradient is not finite, rectification stops for that sample (the latent is
left as it was) and ``SemanticFlowInfo.stopped`` reports it; the sampler never returns NaN images from guidance.
With ``eta0 = 0``, ``rho = 0`` or ``n_inner = 0`` the unguided sampler is reproduced exactly.

The toy customization task the claims measure this on is :mod:`jaxlab.generative.semantic_flow.shapes`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.algorithm import Algorithm, register_algorithm
from jaxlab.core.validation import check_in_range, check_int, value_check
from jaxlab.generative.semantic_flow import rectified_flow as rf

__all__ = [
    "ROLE_CONTEXT",
    "ROLE_SUBJECT",
    "ROLE_VISUAL",
    "ProbeSet",
    "SemanticFlowConfig",
    "SemanticFlowInfo",
    "SemanticFlowState",
    "SemanticFlowStepInfo",
    "aggregate_responses",
    "forward_with_probes",
    "make_probes",
    "rectify_step",
    "semantic_energy",
    "semanticflow_algorithm",
    "semanticflow_sample",
    "soft_mask",
]

ROLE_SUBJECT, ROLE_VISUAL, ROLE_CONTEXT = 0, 1, 2
STREAM_TEXT, STREAM_REF = 0, 1
_MODEL_STREAM = (0, 2)  # probe stream {0: text, 1: ref} -> TinyMMDiT stream index


class ProbeSet(NamedTuple):
    """Read-only probe tokens of SemanticFlow's perception stage **[chosen]** (module docstring), ``P`` of them.

    Attributes:
      emb: ``(P, width)`` float array, the probes' initial states.
      stream: ``(P,)`` int array, the source stream (0 text, 1 reference).
      role: ``(P,)`` int array, the role (``ROLE_SUBJECT`` 0, ``ROLE_VISUAL`` 1, ``ROLE_CONTEXT`` 2).
    """

    emb: jax.Array
    stream: jax.Array
    role: jax.Array


class SemanticFlowConfig(NamedTuple):
    """Static configuration of SemanticFlow's guidance; every default is **[chosen]** (the paper's values are
    not known).

    Attributes:
      blocks: tuple of ints, the MM-DiT blocks whose probe responses are averaged (each in ``[0, depth)``).
      rho: float in [0, 1], the fraction of early steps rectified: the first ``ceil(rho N)`` of ``N``.
      eta0: float >= 0, the rectification step size ``eta0`` (0: no guidance).
      n_inner: int >= 0, the rectification updates per early step.
      lam_align: float >= 0, the weight ``lam_a`` of ``E_align``.
      lam_excite: float >= 0, the weight ``lam_e`` of ``E_excite``.
      lam_leak: float >= 0, the weight ``lam_l`` of ``E_leak``.
      mask_kappa: float >= 0, the soft-mask sharpness ``kappa``.
      mask_tau: float in [0, 1], the soft-mask threshold ``tau``.
      smooth: bool, 3x3 Gaussian smoothing of the aggregated responses.
    """

    blocks: tuple = (1,)
    rho: float = 0.3
    eta0: float = 0.5
    n_inner: int = 1
    lam_align: float = 1.0
    lam_excite: float = 0.5
    lam_leak: float = 0.5
    mask_kappa: float = 10.0
    mask_tau: float = 0.5
    smooth: bool = True


class SemanticFlowInfo(NamedTuple):
    """Diagnostics of :func:`semanticflow_sample`.

    Attributes:
      energies: ``(n_early, n_inner)`` float array, the energy before each rectification update.
      stopped: bool scalar, rectification stopped on a non-finite energy or gradient.
      n_rectified: int32 scalar, the number of rectification updates applied.
    """

    energies: jax.Array
    stopped: jax.Array
    n_rectified: jax.Array


def _check_config(cfg: SemanticFlowConfig, depth: int) -> None:
    if not isinstance(cfg, SemanticFlowConfig):
        raise ValueError(f"cfg must be a SemanticFlowConfig, got {type(cfg).__name__}")
    check_in_range(cfg.rho, "rho", 0.0, 1.0)
    check_in_range(cfg.eta0, "eta0", 0.0)
    check_int(cfg.n_inner, "n_inner", min_value=0)
    if len(cfg.blocks) == 0:
        raise ValueError("blocks must name at least one block")
    if any(not isinstance(b, int) or b < 0 or b >= depth for b in cfg.blocks):
        raise ValueError(f"blocks must be ints in [0, {depth}), got {cfg.blocks}")
    for name in ("lam_align", "lam_excite", "lam_leak", "mask_kappa"):
        check_in_range(getattr(cfg, name), name, 0.0)
    check_in_range(cfg.mask_tau, "mask_tau", 0.0, 1.0)


def _check_probes(model: rf.TinyMMDiT, probes: ProbeSet) -> None:
    if not isinstance(probes, ProbeSet):
        raise ValueError(f"probes must be a ProbeSet, got {type(probes).__name__}")
    if probes.emb.ndim != 2 or probes.emb.shape[1] != model.width:
        raise ValueError(f"probes.emb must have shape (P, {model.width}) (the model width), got {probes.emb.shape}")
    p = probes.emb.shape[0]
    if probes.stream.shape != (p,) or probes.role.shape != (p,):
        raise ValueError(f"probes.stream and probes.role must have shape ({p},), got {probes.stream.shape} and "
                         f"{probes.role.shape}")


def _check_ref(model: rf.TinyMMDiT, ref) -> jax.Array:
    """Accept a reference image ``(side, side, C)`` or its tokens ``(Nr, p*p*C)``; return the image."""
    ref = jnp.asarray(ref)
    pdim = model.patch * model.patch * model.channels
    if ref.ndim == 2:
        if ref.shape != (model.n_img, pdim):
            raise ValueError(f"ref tokens must have shape ({model.n_img}, {pdim}) (Nr = {model.n_img}), "
                             f"got {ref.shape}")
        return rf.unpatchify(ref, model.patch, model.side, model.channels)
    if ref.ndim == 3 and ref.shape[-1] == model.channels and ref.shape[0] % model.patch == 0 \
            and ref.shape[0] == ref.shape[1] == model.side:
        return ref
    raise ValueError(f"ref must be an image of shape {(model.side, model.side, model.channels)} or tokens "
                     f"({model.n_img}, {pdim}), got {ref.shape}")


def make_probes(model: rf.TinyMMDiT, cond_tokens, word_positions, ref_tokens, ref_mask=None,
                roles=None) -> ProbeSet:
    """Build SemanticFlow's probes **[chosen]** (module docstring) from a prompt and a reference image.

    Text probes are the initial text-stream states (token embedding plus position) at ``word_positions``; one
    visual probe is the mean initial reference-stream state weighted by ``ref_mask`` (the whole reference when
    None).

    Paper: "SemanticFlow: Tuning-Free Customization with Semantic Perception and Energy-Guided Rectification"
    (2026; authors and arXiv id unknown, abstract only).

    Args:
      model: a :class:`~jaxlab.generative.semantic_flow.TinyMMDiT` with a reference stream.
      cond_tokens: ``(text_len,)`` int array, the prompt.
      word_positions: sequence of ints in ``[0, text_len)``, the prompt words to probe.
      ref_tokens: the reference image ``(side, side, C)`` or its patch tokens ``(Nx, p p C)``.
      ref_mask: optional ``(Nx,)`` float weights of the reference tokens (e.g. the subject's mask).
      roles: optional sequence of ``ROLE_SUBJECT`` / ``ROLE_CONTEXT``, one per word position (default: the first
        word is the subject, the rest context).

    Returns:
      A :class:`ProbeSet` of ``len(word_positions) + 1`` probes (the visual probe last).

    Raises:
      TypeError: a word position that is not an int.
      ValueError: a model without a reference stream; no word position, or one outside ``[0, text_len)``; ``roles``
        of the wrong length or with another role; ``cond_tokens``, ``ref_tokens`` or ``ref_mask`` of the wrong shape.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.generative.semantic_flow import TinyMMDiT, make_probes
      >>> model = TinyMMDiT(jax.random.key(0), side=8, width=8, heads=2, depth=1, zero_init=False)
      >>> tokens, ref = jnp.array([1, 12, 2, 3, 9, 13, 0, 0]), jnp.zeros((8, 8, 3))
      >>> probes = make_probes(model, tokens, (0, 1), ref)  # words 0 (subject) and 1 (context), plus the visual probe
      >>> probes.emb.shape, probes.role.tolist()
      ((3, 8), [0, 2, 1])
    """
    if not model.use_ref:
        raise ValueError("model must have a reference stream (use_ref=True)")
    word_positions = tuple(check_int(w, "word_positions", min_value=0, max_value=model.text_len - 1)
                           for w in word_positions)
    if not word_positions:
        raise ValueError("word_positions must name at least one prompt word")
    roles = (ROLE_SUBJECT,) + (ROLE_CONTEXT,) * (len(word_positions) - 1) if roles is None else tuple(roles)
    if len(roles) != len(word_positions) or any(r not in (ROLE_SUBJECT, ROLE_CONTEXT) for r in roles):
        raise ValueError(f"roles must give subject (0) or context (2) for each word position, got {roles}")
    if jnp.shape(cond_tokens) != (model.text_len,):
        raise ValueError(f"cond_tokens must have shape ({model.text_len},), got {jnp.shape(cond_tokens)}")
    ref = _check_ref(model, ref_tokens)
    text = model.tok_emb[cond_tokens] + model.pos_txt
    rs = model.ref_token_states(ref)
    w = jnp.ones(model.n_img, rs.dtype) if ref_mask is None else jnp.asarray(ref_mask, rs.dtype)
    if w.shape != (model.n_img,):
        raise ValueError(f"ref_mask must have shape ({model.n_img},), got {w.shape}")
    vis = jnp.sum(rs * w[:, None], axis=0) / jnp.maximum(jnp.sum(w), 1e-8)
    emb = jnp.concatenate([text[jnp.array(word_positions)], vis[None]])
    stream = jnp.array((STREAM_TEXT,) * len(word_positions) + (STREAM_REF,), jnp.int32)
    return ProbeSet(emb, stream, jnp.array((*roles, ROLE_VISUAL), jnp.int32))


def _responses(model, x, sigma, cond, ref, probes, blocks, full: bool):
    stream = jnp.asarray(_MODEL_STREAM)[probes.stream]
    v, resp = model.forward(x, sigma, (cond, ref), probes.emb, stream, None if full else max(blocks) + 1)
    return v, resp[jnp.array(blocks)]


def forward_with_probes(model: rf.TinyMMDiT, x, sigma, cond, ref, probes: ProbeSet, blocks=None):
    """The velocity and the probe response maps in one forward pass (module docstring).

    ``R_p^{b,h} = softmax_i(q_p^{b,h} . k_{x,i}^{b,h} / sqrt(d_h))`` over the image tokens. The velocity equals
    ``model(x, sigma, (cond, ref))`` exactly: no real query sees a probe.

    Args:
      model: a :class:`~jaxlab.generative.semantic_flow.TinyMMDiT` with a reference stream.
      x: ``(side, side, C)`` float array, the noisy image.
      sigma: float scalar, the noise level.
      cond: ``(text_len,)`` int array, the prompt.
      ref: the reference image ``(side, side, C)`` or its tokens ``(Nx, p p C)``.
      probes: the :class:`ProbeSet`.
      blocks: optional sequence of block indices (None: all blocks).

    Returns:
      ``(v, responses)``: the ``(side, side, C)`` velocity and the ``(len(blocks), H, P, Nx)`` responses.

    Raises:
      ValueError: ``probes`` not a :class:`ProbeSet` or of the wrong shapes, or a bad ``ref`` (as
        :meth:`~jaxlab.generative.semantic_flow.TinyMMDiT.forward` for the other inputs).
    """
    _check_probes(model, probes)
    ref = _check_ref(model, ref)
    blocks = tuple(range(len(model.blocks))) if blocks is None else tuple(blocks)
    return _responses(model, x, sigma, cond, ref, probes, blocks, True)


def _gaussian_kernel(s: float = 0.5) -> np.ndarray:
    g = np.exp(-(np.arange(-1, 2) ** 2) / (2 * s * s))
    k = np.outer(g, g)
    return k / k.sum()


def aggregate_responses(responses, grid_hw, smooth: bool = True):
    """Aggregated response maps ``R_p = mean_{b, h} R_p^{b,h}``, optionally smoothed by a 3x3 Gaussian (standard
    deviation 0.5 tokens, zero padding) on the token grid and renormalised to sum to 1 **[chosen]**.

    Args:
      responses: ``(B_sel, H, P, Nx)`` float array of per-block, per-head responses.
      grid_hw: ``(gh, gw)`` ints with ``gh gw = Nx``, the token grid.
      smooth: apply the smoothing.

    Returns:
      ``(P, Nx)`` float array, each row on the simplex.

    Raises:
      ValueError: ``responses`` not 4-d or its last axis not ``gh gw``.
    """
    responses = jnp.asarray(responses)
    gh, gw = grid_hw
    if responses.ndim != 4 or responses.shape[-1] != gh * gw:
        raise ValueError(f"responses must have shape (B_sel, H, P, {gh * gw}), got {responses.shape}")
    r = jnp.mean(responses, axis=(0, 1))
    if smooth:
        img = r.reshape(-1, 1, gh, gw)
        k = jnp.asarray(_gaussian_kernel(), r.dtype)[None, None]
        img = jax.lax.conv_general_dilated(img, k, (1, 1), "SAME")
        r = img.reshape(r.shape)
        r = r / jnp.sum(r, axis=-1, keepdims=True)
    return r


def soft_mask(R, kappa: float = 10.0, tau: float = 0.5):
    """Soft masks ``M = sg(sigmoid(kappa (clip((R - min) / (max - min), 0, 1) - tau)))`` per row **[chosen]**, with
    ``sg`` the stop-gradient.

    Args:
      R: ``(..., Nx)`` float array of response maps (min and max over the last axis).
      kappa: float, the sharpness.
      tau: float, the threshold.

    Returns:
      Float array of ``R``'s shape in (0, 1), with zero gradient.
    """
    R = jnp.asarray(R)
    lo, hi = jnp.min(R, axis=-1, keepdims=True), jnp.max(R, axis=-1, keepdims=True)
    m = jnp.clip((R - lo) / jnp.maximum(hi - lo, 1e-12), 0.0, 1.0)
    return jax.lax.stop_gradient(jax.nn.sigmoid(kappa * (m - tau)))


def _role_weights(roles, role):
    w = (roles == role).astype(jnp.float32)
    return w / jnp.maximum(jnp.sum(w), 1.0)


def semantic_energy(R, roles, cfg: SemanticFlowConfig | None = None, masks=None):
    """SemanticFlow's energy **[chosen]** of aggregated responses (module docstring):
    ``E = lam_a E_align + lam_e E_excite + lam_l E_leak``, with ``R_vis`` the mean map of the visual probes and
    ``M_subj`` the mean mask of the subject probes.

    Args:
      R: ``(P, Nx)`` float array of aggregated responses.
      roles: ``(P,)`` int array of probe roles.
      cfg: the :class:`SemanticFlowConfig` (weights and mask parameters); default ``SemanticFlowConfig()``.
      masks: optional ``(P, Nx)`` float masks to use instead of ``soft_mask(R)`` (to evaluate the energy whose
        gradient a rectification step followed).

    Returns:
      ``(E, terms)``: the float scalar energy and a dict with the scalars ``"align"``, ``"excite"``, ``"leak"`` and
      the ``(P, Nx)`` ``"masks"``.

    Raises:
      ValueError: ``R`` not 2-d or ``roles`` not ``(P,)``; ``lam_align > 0`` without both a subject and a visual
        probe (under ``jit``: a run-time error).
    """
    cfg = SemanticFlowConfig() if cfg is None else cfg
    R = jnp.asarray(R)
    roles = jnp.asarray(roles)
    if R.ndim != 2 or roles.shape != (R.shape[0],):
        raise ValueError(f"roles must have shape ({R.shape[0]},) for responses of shape {R.shape}")
    if cfg.lam_align > 0:
        roles = value_check(roles, lambda r: ~(jnp.any(r == ROLE_SUBJECT) & jnp.any(r == ROLE_VISUAL)),
                            "roles must include a subject (0) and a visual (1) probe when lam_align > 0")
    M = soft_mask(R, cfg.mask_kappa, cfg.mask_tau) if masks is None else jax.lax.stop_gradient(masks)
    r_vis = _role_weights(roles, ROLE_VISUAL).astype(R.dtype) @ R
    m_subj = _role_weights(roles, ROLE_SUBJECT).astype(R.dtype) @ M
    e_align = (1 - jnp.sum(r_vis * m_subj) / jnp.maximum(jnp.sum(r_vis), 1e-12)) ** 2
    text = (roles != ROLE_VISUAL).astype(R.dtype)
    rt = R * text[:, None] / jnp.maximum(jnp.sum(R * text[:, None], axis=0, keepdims=True), 1e-12)
    e_excite = jnp.sum(text * (1 - jnp.max(rt, axis=-1)) ** 2)
    ctx = (roles == ROLE_CONTEXT).astype(R.dtype)
    e_leak = jnp.sum(ctx * (M @ r_vis))
    e = cfg.lam_align * e_align + cfg.lam_excite * e_excite + cfg.lam_leak * e_leak
    return e, {"align": e_align, "excite": e_excite, "leak": e_leak, "masks": M}


def _grid(model) -> tuple[int, int]:
    g = model.side // model.patch
    return g, g


def _energy_of_x(model, x, sigma, cond, ref, probes, cfg, masks=None):
    _, resp = _responses(model, x, sigma, cond, ref, probes, cfg.blocks, False)
    e, terms = semantic_energy(aggregate_responses(resp, _grid(model), cfg.smooth), probes.role, cfg, masks)
    return e, terms["masks"]


def _rectify(model, x, sigma, cond, ref, probes, cfg):
    """One guarded update: ``(x_new, E_before, ok, masks)``; ``x`` unchanged where E or its gradient is not
    finite."""
    (e, masks), g = jax.value_and_grad(_energy_of_x, argnums=1, has_aux=True)(model, x, sigma, cond, ref,
                                                                              probes, cfg)
    ok = jnp.isfinite(e) & jnp.all(jnp.isfinite(g))
    g = jnp.where(ok, g, 0.0)
    step = cfg.eta0 * sigma * g / (jnp.sqrt(jnp.mean(g * g)) + 1e-8)
    return jnp.where(ok, x - step.astype(x.dtype), x), e, ok, masks


def rectify_step(model: rf.TinyMMDiT, x, sigma, cond, ref, probes: ProbeSet, cfg: SemanticFlowConfig,
                 *, refresh_masks: bool = False):
    """One energy-guided rectification ``x <- x - eta0 sigma g / (rms(g) + 1e-8)``, ``g = grad_x E(R(x, sigma))``
    **[chosen]** (module docstring); ``x`` is left unchanged where the energy or its gradient is not finite.

    ``E_after`` is the energy that was differentiated, with the soft masks held at their values before the step
    (their stop-gradient makes them constants of the step); ``refresh_masks=True`` recomputes them at ``x_new``.

    Args:
      model: a :class:`~jaxlab.generative.semantic_flow.TinyMMDiT` with a reference stream.
      x: ``(side, side, C)`` float array, the latent.
      sigma: float scalar, the noise level.
      cond: ``(text_len,)`` int array, the prompt.
      ref: the reference image or its tokens.
      probes: the :class:`ProbeSet`.
      cfg: the :class:`SemanticFlowConfig`.
      refresh_masks: recompute the masks for ``E_after``.

    Returns:
      ``(x_new, E_before, E_after)``: the ``(side, side, C)`` latent and two float scalars.

    Raises:
      ValueError: a bad ``cfg`` (not a :class:`SemanticFlowConfig`, or a field out of range), ``probes`` or
        ``ref``.
      TypeError: a non-int ``cfg.n_inner``.
    """
    _check_config(cfg, len(model.blocks))
    _check_probes(model, probes)
    ref = _check_ref(model, ref)
    x_new, e0, _, masks = _rectify(model, x, sigma, cond, ref, probes, cfg)
    e1, _ = _energy_of_x(model, x_new, sigma, cond, ref, probes, cfg, None if refresh_masks else masks)
    return x_new, e0, e1


def _velocity(model, cfg_scale):
    def v(x, sigma, c):
        tokens, ref = c
        vc = model(x, sigma, (tokens, ref))
        if cfg_scale == 1.0:
            return vc
        vu = model(x, sigma, (jnp.zeros_like(tokens), jnp.zeros_like(ref)))
        return rf.cfg_velocity(vc, vu, cfg_scale)

    return v


class SemanticFlowState(NamedTuple):
    """State of :func:`semanticflow_algorithm`.

    Attributes:
      x: the current latent ``(side, side, C)`` at ``sigmas[i]``.
      i: int32 scalar, the number of Euler steps taken.
      stopped: whether rectification stopped on a non-finite energy or gradient.
      n_rectified: int32 scalar, the number of rectification updates applied.
    """

    x: jax.Array
    i: jax.Array
    stopped: jax.Array
    n_rectified: jax.Array


class SemanticFlowStepInfo(NamedTuple):
    """Diagnostics of one step of :func:`semanticflow_algorithm`.

    Attributes:
      energies: ``(n_inner,)`` energy before each rectification (NaN on the unguided steps).
      guided: whether the step was one of the first ``ceil(rho N)`` (rectified) steps.
    """

    energies: jax.Array
    guided: jax.Array


def semanticflow_algorithm(model: rf.TinyMMDiT, sigmas, cond, ref, probes: ProbeSet,
                           cfg: SemanticFlowConfig | None = None, cfg_scale: float = 1.0) -> Algorithm:
    """SemanticFlow's guided Euler sampler as an :class:`~jaxlab.core.Algorithm`, model, grid, prompt, reference
    and probes bound once.

    SemanticFlow is known only through its abstract; the probes, energy and rectification are a **[chosen]**
    reconstruction (the module docstring says what and from which prior work). ``init(x0) -> SemanticFlowState``
    at ``sigmas[0]``; ``step(key, state) -> (SemanticFlowState, SemanticFlowStepInfo)`` applies, on the first
    ``ceil(rho N)`` steps, ``n_inner`` guarded rectifications ``x <- x - eta0 sigma_i g / (rms(g) + 1e-8)`` and
    then, on every step, the Euler step ``x <- x + (sigma_{i+1} - sigma_i) v(x, sigma_i, c)`` (``key`` is
    ignored). ``N`` steps of it give :func:`semanticflow_sample`'s image.

    Paper: "SemanticFlow: Tuning-Free Customization with Semantic Perception and Energy-Guided Rectification"
    (2026; authors and arXiv id unknown, abstract only).

    Args:
      model: a :class:`~jaxlab.generative.semantic_flow.TinyMMDiT` with a reference stream.
      sigmas: the ``(N + 1,)`` float grid from 1 to 0.
      cond: ``(text_len,)`` int array, the prompt tokens.
      ref: the reference image ``(side, side, C)`` or its tokens.
      probes: the :class:`ProbeSet`.
      cfg: the :class:`SemanticFlowConfig`; default ``SemanticFlowConfig()``.
      cfg_scale: float, the classifier-free guidance scale of the velocity (1: none; the unconditional velocity
        zeroes the prompt and the reference).

    Returns:
      ``Algorithm(init, step)``.

    Raises:
      ValueError: a bad configuration, probes, reference or grid; ``init`` with ``x0`` of the wrong shape.
      TypeError: a non-int ``cfg.n_inner``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.core import run
      >>> from jaxlab.generative.semantic_flow import (SemanticFlowConfig, TinyMMDiT, make_probes, make_sigmas,
      ...                                              semanticflow_algorithm)
      >>> model = TinyMMDiT(jax.random.key(0), side=8, width=8, heads=2, depth=1, zero_init=False)
      >>> tokens, ref = jnp.array([1, 12, 2, 3, 9, 13, 0, 0]), jnp.zeros((8, 8, 3))
      >>> probes = make_probes(model, tokens, (0, 1), ref)
      >>> cfg = SemanticFlowConfig(blocks=(0,), rho=0.5)
      >>> algo = semanticflow_algorithm(model, make_sigmas(4), tokens, ref, probes, cfg)
      >>> state, trace = run(algo.step, algo.init(jax.random.normal(jax.random.key(1), (8, 8, 3))),
      ...                    jax.random.key(2), 4)
      >>> trace.infos.guided.tolist(), state.x.shape  # the first ceil(0.5 * 4) steps are rectified
      ([True, True, False, False], (8, 8, 3))
    """
    cfg = SemanticFlowConfig() if cfg is None else cfg
    _check_config(cfg, len(model.blocks))
    _check_probes(model, probes)
    ref = _check_ref(model, ref)
    sigmas = rf._check_sigmas(sigmas)
    shape = (model.side, model.side, model.channels)
    n = sigmas.shape[0] - 1
    n_early = min(n, math.ceil(cfg.rho * n)) if cfg.n_inner > 0 else 0
    vel = _velocity(model, cfg_scale)
    c = (cond, ref)

    def init(x0) -> SemanticFlowState:
        x0 = jnp.asarray(x0)
        if x0.shape != shape:
            raise ValueError(f"x0 must have shape {shape}, got {x0.shape}")
        return SemanticFlowState(x0, jnp.zeros((), jnp.int32), jnp.zeros((), bool), jnp.zeros((), jnp.int32))

    def guided(state):
        def inner(ic, _):
            x, stp, cnt = ic
            x_new, e, ok, _ = _rectify(model, x, sigmas[state.i], cond, ref, probes, cfg)
            go = ~stp & ok
            return (jnp.where(go, x_new, x), stp | ~ok, cnt + go.astype(jnp.int32)), e

        (x, stopped, count), es = jax.lax.scan(inner, (state.x, state.stopped, state.n_rectified), None,
                                               length=cfg.n_inner)
        return x, stopped, count, es

    def step(key, state: SemanticFlowState) -> tuple[SemanticFlowState, SemanticFlowStepInfo]:
        del key
        if n_early == 0:
            x, stopped, count = state.x, state.stopped, state.n_rectified
            es = jnp.full((cfg.n_inner,), jnp.nan, state.x.dtype)
        else:
            es_type = jax.eval_shape(guided, state)[3]

            def plain(st):
                return st.x, st.stopped, st.n_rectified, jnp.full(es_type.shape, jnp.nan, es_type.dtype)

            x, stopped, count, es = jax.lax.cond(state.i < n_early, guided, plain, state)
        st = rf.euler_step(rf.EulerState(x, state.i), vel(x, sigmas[state.i], c), sigmas)
        return SemanticFlowState(st.x, st.i, stopped, count), SemanticFlowStepInfo(es, state.i < n_early)

    return Algorithm(init, step)


def semanticflow_sample(model: rf.TinyMMDiT, key_or_x_init, sigmas, cond, ref, probes: ProbeSet,
                        cfg: SemanticFlowConfig | None = None, cfg_scale: float = 1.0):
    """SemanticFlow sampling of one image: Euler along ``sigmas`` (1 to 0) with energy-guided rectification on the
    first ``ceil(rho N)`` steps (``n_inner`` updates each).

    The same sampler as :func:`semanticflow_algorithm` (a **[chosen]** reconstruction from the abstract; module
    docstring), as one function that also reports the energies. With ``eta0 = 0``, ``rho = 0`` or ``n_inner = 0``
    it reproduces the unguided Euler sampler exactly. vmap it over noise, prompts and probes.

    Paper: "SemanticFlow: Tuning-Free Customization with Semantic Perception and Energy-Guided Rectification"
    (2026; authors and arXiv id unknown, abstract only).

    Args:
      model: a :class:`~jaxlab.generative.semantic_flow.TinyMMDiT` with a reference stream.
      key_or_x_init: a PRNG key (the noise is drawn inside, default float dtype) or the initial noise
        ``(side, side, C)``.
      sigmas: the ``(N + 1,)`` float grid from 1 to 0.
      cond: ``(text_len,)`` int array, the prompt tokens.
      ref: the reference image ``(side, side, C)`` or its tokens.
      probes: the :class:`ProbeSet`.
      cfg: the :class:`SemanticFlowConfig`; default ``SemanticFlowConfig()``.
      cfg_scale: float, the classifier-free guidance scale (1: none).

    Returns:
      ``(x, info)``: the ``(side, side, C)`` image and its :class:`SemanticFlowInfo`.

    Raises:
      ValueError: a bad configuration, probes, reference or grid, or noise of the wrong shape.
      TypeError: a non-int ``cfg.n_inner``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from jaxlab.generative.semantic_flow import (SemanticFlowConfig, TinyMMDiT, make_probes, make_sigmas,
      ...                                              semanticflow_sample)
      >>> model = TinyMMDiT(jax.random.key(0), side=8, width=8, heads=2, depth=1, zero_init=False)
      >>> tokens, ref = jnp.array([1, 12, 2, 3, 9, 13, 0, 0]), jnp.zeros((8, 8, 3))
      >>> probes = make_probes(model, tokens, (0, 1), ref)
      >>> cfg = SemanticFlowConfig(blocks=(0,), rho=0.5)
      >>> x, info = semanticflow_sample(model, jax.random.key(1), make_sigmas(4), tokens, ref, probes, cfg)
      >>> x.shape, info.energies.shape  # 2 rectified steps, 1 update each
      ((8, 8, 3), (2, 1))
    """
    cfg = SemanticFlowConfig() if cfg is None else cfg
    _check_config(cfg, len(model.blocks))
    _check_probes(model, probes)
    ref = _check_ref(model, ref)
    sigmas = rf._check_sigmas(sigmas)
    shape = (model.side, model.side, model.channels)
    if jnp.issubdtype(jnp.asarray(key_or_x_init).dtype, jax.dtypes.prng_key):
        x0 = jax.random.normal(key_or_x_init, shape)
    else:
        x0 = jnp.asarray(key_or_x_init)
        if x0.shape != shape:
            raise ValueError(f"key_or_x_init must be a PRNG key or noise of shape {shape}, got {x0.shape}")
    n = sigmas.shape[0] - 1
    n_early = min(n, math.ceil(cfg.rho * n)) if cfg.n_inner > 0 else 0
    vel = _velocity(model, cfg_scale)
    c = (cond, ref)

    def early(carry, _):
        st, stopped, count = carry

        def inner(ic, _):
            x, stp, cnt = ic
            x_new, e, ok, _ = _rectify(model, x, sigmas[st.i], cond, ref, probes, cfg)
            go = ~stp & ok
            return (jnp.where(go, x_new, x), stp | ~ok, cnt + go.astype(jnp.int32)), e

        (x, stopped, count), es = jax.lax.scan(inner, (st.x, stopped, count), None, length=cfg.n_inner)
        st = rf.euler_step(rf.EulerState(x, st.i), vel(x, sigmas[st.i], c), sigmas)
        return (st, stopped, count), es

    carry = (rf.euler_init(x0), jnp.zeros((), bool), jnp.zeros((), jnp.int32))
    (st, stopped, count), energies = jax.lax.scan(early, carry, None, length=n_early)
    x = st.x if n_early == n else rf.euler_sample(vel, st.x, sigmas[n_early:], c)
    return x, SemanticFlowInfo(energies.reshape(n_early, cfg.n_inner), stopped, count)


def _semanticflow_example(key):
    """Tiny instance: a random 8x8 one-block MM-DiT, two text probes and a visual probe, 6 Euler steps."""
    model = rf.TinyMMDiT(key, side=8, width=8, heads=2, depth=1, zero_init=False)
    tokens = jnp.array([1, 12, 2, 3, 9, 13, 0, 0], jnp.int32)
    ref = jnp.zeros((8, 8, 3))
    probes = make_probes(model, tokens, (0, 1), ref)
    cfg = SemanticFlowConfig(blocks=(0,), rho=0.5)
    algo = semanticflow_algorithm(model, rf.make_sigmas(6), tokens, ref, probes, cfg)
    return algo, algo.init(jax.random.normal(jax.random.fold_in(key, 1), (8, 8, 3))), None


register_algorithm("semanticflow", semanticflow_algorithm, _semanticflow_example, area="semantic_flow")

