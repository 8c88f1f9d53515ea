"""SemanticFlow: tuning-free customization of a rectified-flow transformer with semantic perception (read-only
probe token streams) and energy-guided rectification of the early sampling steps (spec ``generative.md`` (a)).

Paper: "SemanticFlow: Tuning-Free Customization with Semantic Perception and Energy-Guided Rectification" (2026),
known only through its abstract: authors, arXiv id and code were not located. Everything below is the spec's
reconstruction from the abstract and the guidance literature it builds on (Attend-and-Excite arXiv:2301.13826,
layout guidance arXiv:2304.03373, self-guidance arXiv:2306.00986, FlowChef arXiv:2412.00100, OminiControl
arXiv:2411.15098); parts marked **[chosen]** are design choices, kept as configuration.

Perception **[chosen]**: ``P`` probe tokens ``s_p`` are copies of the initial text-stream state of chosen prompt
words (subject / context) and of the mean reference-stream state inside the reference subject mask (visual).
They ride along through the frozen MM-DiT (:class:`~jaxlab.generative.rectified_flow.TinyMMDiT`), processed with
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

Deviation: the spec writes ``Rt = R / max_i R``, whose maximum is identically 1 (so ``E_excite == 0``); we use
Attend-and-Excite's normalisation across the text probes at each location instead. With a single text probe
``E_excite`` is 0.

Energy-guided rectification inside the Euler sampler, on the first ``ceil(rho N)`` steps only:

    repeat n_inner times:  g = grad_x E(R(x, sigma_i)),   x <- x - eta0 sigma_i g / (rms(g) + 1e-8)
    x <- x + (sigma_{i+1} - sigma_i) v_theta(x, sigma_i, c, ref)

(velocity form: ``v' = v + (eta0 sigma / dsigma) g / rms(g)``). The gradient runs the model only up to
``max(blocks)``. If an energy or its gradient is not finite, rectification stops for that sample (the latent is
left as it was) and ``SemanticFlowInfo.stopped`` reports it; the sampler never returns NaN images from guidance.
With ``eta0 = 0``, ``rho = 0`` or ``n_inner = 0`` the unguided sampler is reproduced exactly.

Toy customization task **[chosen]** (spec (a).3): 16x16x3 images in [-1, 1] on a grey (0) background; a
"concept" is a 5x5 two-colour texture (horizontal/vertical stripes or checker, colours uniform in [-1, 1]^3,
so every test concept is an unseen combination) that no word describes; prompts
``<concept> POS [and COLOR SHAPE POS2]`` (8 tokens), the reference shows the texture at the centre anchor, the
target at anchor POS of a 3x3 grid (5x5 windows at offsets 1, 6, 11); second objects are 5x5 squares, disks or
crosses in one of 6 palette colours. Metrics: prompt alignment (concept window at POS is the best match among the
9 anchors, and the second object's foreground mean colour is nearest to COLOR) and concept fidelity
``1 - MSE(window at POS, texture)/4``.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.loop import run
from jaxlab.core.validation import check_in_range, check_int, is_concrete
from jaxlab.generative import rectified_flow as rf

__all__ = [
    "ANCHORS",
    "PALETTE",
    "ROLE_CONTEXT",
    "ROLE_SUBJECT",
    "ROLE_VISUAL",
    "ProbeSet",
    "SemanticFlowConfig",
    "SemanticFlowInfo",
    "aggregate_responses",
    "anchor_token_mask",
    "anchor_windows",
    "concept_fidelity",
    "forward_with_probes",
    "make_probes",
    "make_shapes_batch",
    "prompt_alignment",
    "rectify_step",
    "semantic_energy",
    "semanticflow_sample",
    "soft_mask",
    "train_tiny_mmdit",
]

ROLE_SUBJECT, ROLE_VISUAL, ROLE_CONTEXT = 0, 1, 2
STREAM_TEXT, STREAM_REF = 0, 1
_MODEL_STREAM = (0, 2)  # probe stream {0: text, 1: ref} -> TinyMMDiT stream index

# toy vocabulary
PAD, CONCEPT, AND = 0, 1, 2
COLOR0, SHAPE0, POS0 = 3, 9, 12
VOCAB = POS0 + 9
PALETTE = np.array([[1, -1, -1], [-1, 1, -1], [-1, -1, 1], [1, 1, -1], [-1, 1, 1], [1, -1, 1]], np.float32)
ANCHORS = (1, 6, 11)
WIN = 5
SIDE = 16


class ProbeSet(NamedTuple):
    """Probe tokens: initial states ``emb (P, d)``, source stream ``(P,)`` (0 text, 1 reference) and role
    ``(P,)`` (0 subject, 1 visual, 2 context)."""

    emb: jax.Array
    stream: jax.Array
    role: jax.Array


class SemanticFlowConfig(NamedTuple):
    """Static configuration **[chosen defaults]**: response blocks, early fraction ``rho``, step ``eta0``, inner
    repeats, energy weights, mask sharpness/threshold, smoothing."""

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
    """Diagnostics of :func:`semanticflow_sample`: energy before each rectification ``(n_early, n_inner)``,
    whether rectification stopped on a non-finite energy/gradient, and the number of updates applied."""

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
    """Text probes = initial text-stream states at ``word_positions`` (roles default: first subject, the rest
    context), plus one visual probe = mean initial reference-stream state weighted by ``ref_mask (Nr,)``
    (whole reference if ``None``)."""
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
    w = jnp.ones(model.n_img) if ref_mask is None else jnp.asarray(ref_mask, rs.dtype)
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
    """Velocity and probe responses: ``(v (side, side, C), responses (len(blocks), H, P, Nx))`` (all blocks
    when ``blocks`` is ``None``). ``v`` equals ``model(x, sigma, (cond, ref))`` exactly."""
    _check_probes(model, probes)
    ref = _check_ref(model, ref)
    blocks = tuple(range(len(model.blocks))) if blocks is None else tuple(blocks)
    return _responses(model, x, sigma, cond, ref, probes, blocks, True)


def _gaussian_kernel(s: float = 0.5) -> np.ndarray:
    g = np.exp(-(np.arange(-1, 2) ** 2) / (2 * s * s))
    k = np.outer(g, g)
    return k / k.sum()


def aggregate_responses(responses, grid_hw, smooth: bool = True):
    """``R_p = mean_{b, h} R_p^{b,h}``, optionally 3x3-Gaussian smoothed (sigma 0.5 tokens) on the
    ``grid_hw`` token grid and renormalised: ``(B_sel, H, P, Nx) -> (P, Nx)``, rows on the simplex."""
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
    """``M = sg(sigmoid(kappa (clip((R - min)/(max - min), 0, 1) - tau)))`` per probe row."""
    R = jnp.asarray(R)
    lo, hi = jnp.min(R, axis=-1, keepdims=True), jnp.max(R, axis=-1, keepdims=True)
    m = jnp.clip((R - lo) / jnp.maximum(hi - lo, 1e-12), 0.0, 1.0)
    return jax.lax.stop_gradient(jax.nn.sigmoid(kappa * (m - tau)))


def _role_weights(roles, role):
    w = (roles == role).astype(jnp.float32)
    return w / jnp.maximum(jnp.sum(w), 1.0)


def semantic_energy(R, roles, cfg: SemanticFlowConfig | None = None, masks=None):
    """``E = lam_a E_align + lam_e E_excite + lam_l E_leak`` of aggregated responses ``R (P, Nx)``; returns
    ``(E, {"align", "excite", "leak", "masks"})``. ``masks (P, Nx)`` replaces the soft masks of ``R`` (to
    evaluate the energy whose gradient a rectification step followed)."""
    cfg = SemanticFlowConfig() if cfg is None else cfg
    R = jnp.asarray(R)
    roles = jnp.asarray(roles)
    if R.ndim != 2 or roles.shape != (R.shape[0],):
        raise ValueError(f"roles must have shape ({R.shape[0]},) for responses of shape {R.shape}")
    if cfg.lam_align > 0 and is_concrete(roles):
        have = set(np.asarray(roles).tolist())
        if ROLE_SUBJECT not in have or ROLE_VISUAL not in have:
            raise ValueError("roles must include a subject (0) and a visual (1) probe when lam_align > 0")
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
    """One energy-guided rectification ``x <- x - eta0 sigma g / (rms(g) + 1e-8)``; returns
    ``(x_new, E_before, E_after)`` (``x_new = x`` if the energy or gradient is not finite). ``E_after`` is the
    energy that was differentiated (soft masks held at their pre-step values, as the stop-gradient makes them
    constants of the step); ``refresh_masks=True`` recomputes the masks at ``x_new`` instead."""
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


def semanticflow_sample(model: rf.TinyMMDiT, key_or_x_init, sigmas, cond, ref, probes: ProbeSet,
                        cfg: SemanticFlowConfig | None = None, cfg_scale: float = 1.0):
    """SemanticFlow sampling of one image: Euler along ``sigmas`` (1 -> 0) with energy-guided rectification on
    the first ``ceil(rho N)`` steps (``n_inner`` updates each). ``key_or_x_init`` is a PRNG key (noise drawn
    inside) or the initial noise. Returns ``(x, SemanticFlowInfo)``; vmap over noise/prompts/probes."""
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


# ----------------------------------------------------------------------------- toy customization task


def _shape_masks() -> np.ndarray:
    r, c = np.mgrid[0:WIN, 0:WIN]
    square = np.ones((WIN, WIN))
    disk = ((r - 2) ** 2 + (c - 2) ** 2 <= 5).astype(float)
    cross = ((r == 2) | (c == 2)).astype(float)
    return np.stack([square, disk, cross]).astype(np.float32)


def _texture(key):
    k1, k2 = jax.random.split(key)
    kind = jax.random.randint(k1, (), 0, 3)
    r, c = jnp.mgrid[0:WIN, 0:WIN]
    pat = jnp.stack([r % 2, c % 2, (r + c) % 2])[kind].astype(bool)
    cols = jax.random.uniform(k2, (2, 3), jnp.float32, minval=-1.0, maxval=1.0)
    return jnp.where(pat[..., None], cols[0], cols[1])


def _place(img, patch, pos):
    r, c = jnp.asarray(ANCHORS)[pos // 3], jnp.asarray(ANCHORS)[pos % 3]
    return jax.lax.dynamic_update_slice(img, patch, (r, c, 0))


def _one_example(key, concept: bool, p_second: float):
    k = jax.random.split(key, 8)
    pos = jax.random.randint(k[0], (), 0, 9)
    pos2 = (pos + 1 + jax.random.randint(k[1], (), 0, 8)) % 9
    has2 = jax.random.uniform(k[2]) < p_second
    color2, shape2 = jax.random.randint(k[3], (), 0, 6), jax.random.randint(k[4], (), 0, 3)
    masks = jnp.asarray(_shape_masks())
    pal = jnp.asarray(PALETTE)
    if concept:
        tex = _texture(k[5])
    else:
        c1, s1 = jax.random.randint(k[6], (), 0, 6), jax.random.randint(k[7], (), 0, 3)
        tex = masks[s1][..., None] * pal[c1]
    obj2 = masks[shape2][..., None] * pal[color2]
    blank = jnp.zeros((SIDE, SIDE, 3), jnp.float32)
    img = _place(blank, tex, pos)
    img = jnp.where(has2, _place(img, obj2, pos2), img)
    ref = _place(blank, tex, 4) if concept else blank
    head = [CONCEPT, POS0 + pos] if concept else [COLOR0 + c1, SHAPE0 + s1, POS0 + pos]
    tail = [AND, COLOR0 + color2, SHAPE0 + shape2, POS0 + pos2]
    pad = [PAD] * 8

    def words(ws):
        return jnp.stack([jnp.asarray(w, jnp.int32) for w in (ws + pad)[:8]])

    tokens = jnp.where(has2, words(head + tail), words(head))
    meta = {"pos": pos, "has2": has2, "color2": color2, "shape2": shape2, "pos2": pos2, "texture": tex}
    return img, tokens, ref, meta


def make_shapes_batch(key, n: int, *, concept: bool = True, p_second: float = 0.5) -> dict:
    """``n`` toy customization examples: ``images (n,16,16,3)``, ``tokens (n,8)``, ``ref (n,16,16,3)``,
    ``pos (n,)`` and ``meta`` (``pos, has2, color2, shape2, pos2, texture (n,5,5,3)``). With ``concept=False``
    the first object is a described ``COLOR SHAPE`` and the reference is blank."""
    n = check_int(n, "n", min_value=1)
    check_in_range(p_second, "p_second", 0.0, 1.0)
    return _shapes_batch(key, n, bool(concept), float(p_second))


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _shapes_batch(key, n: int, concept: bool, p_second: float) -> dict:
    img, tok, ref, meta = jax.vmap(lambda k: _one_example(k, concept, p_second))(jax.random.split(key, n))
    return {"images": img, "tokens": tok, "ref": ref, "pos": meta["pos"], "meta": meta}


def anchor_token_mask(pos, patch: int = 4):
    """``(Nx,)`` mask of the ``patch x patch`` tokens of a 16x16 image that overlap the 5x5 window of anchor
    ``pos`` (a 2x2 block of tokens for patch 4: chance level of a uniformly random token is 4/16)."""
    g = SIDE // patch
    lo = jnp.arange(g) * patch
    a = jnp.asarray(ANCHORS)
    rows = (lo < a[pos // 3] + WIN) & (lo + patch > a[pos // 3])
    cols = (lo < a[pos % 3] + WIN) & (lo + patch > a[pos % 3])
    return (rows[:, None] & cols[None, :]).reshape(-1)


def anchor_windows(images):
    """The nine 5x5 anchor windows of ``images (B,16,16,3)``: ``(B, 9, 5, 5, 3)``."""
    images = jnp.asarray(images)
    if images.ndim != 4 or images.shape[1:] != (SIDE, SIDE, 3):
        raise ValueError(f"images must have shape (B, {SIDE}, {SIDE}, 3), got {images.shape}")
    return jnp.stack([images[:, r:r + WIN, c:c + WIN] for r in ANCHORS for c in ANCHORS], axis=1)


def concept_fidelity(images, ref, pos, *, metric: str = "mse"):
    """Per image: ``1 - MSE(window at POS, reference texture)/4`` (``metric="mse"``) or the cosine similarity of
    the two flattened windows (``"cosine"``); the texture is the reference's centre window."""
    win = jnp.take_along_axis(anchor_windows(images), jnp.asarray(pos)[:, None, None, None, None], 1)[:, 0]
    tex = anchor_windows(ref)[:, 4]
    a, b = win.reshape(win.shape[0], -1), tex.reshape(tex.shape[0], -1)
    if metric == "mse":
        return 1 - jnp.mean((a - b) ** 2, axis=1) / 4
    if metric == "cosine":
        return jnp.sum(a * b, 1) / jnp.maximum(jnp.linalg.norm(a, axis=1) * jnp.linalg.norm(b, axis=1), 1e-12)
    raise ValueError(f"metric must be 'mse' or 'cosine', got {metric!r}")


def prompt_alignment(images, meta):
    """Per prompt, 1.0 when every clause holds: the concept window at POS has the smallest MSE to the texture
    among the 9 anchors, and (if present) the second object's foreground mean colour (pixels with norm > 0.5)
    at POS2 is nearest to COLOR in the palette."""
    wins = anchor_windows(images)
    b = wins.shape[0]
    mse = jnp.mean((wins - meta["texture"][:, None]) ** 2, axis=(2, 3, 4))
    ok1 = jnp.argmin(mse, axis=1) == meta["pos"]
    w2 = jnp.take_along_axis(wins, meta["pos2"][:, None, None, None, None], 1)[:, 0].reshape(b, -1, 3)
    fg = (jnp.linalg.norm(w2, axis=-1) > 0.5).astype(w2.dtype)
    mean_c = jnp.sum(w2 * fg[..., None], 1) / jnp.maximum(jnp.sum(fg, 1), 1.0)[:, None]
    nearest = jnp.argmin(jnp.sum((mean_c[:, None] - jnp.asarray(PALETTE)) ** 2, -1), axis=1)
    ok2 = (jnp.sum(fg, 1) > 0) & (nearest == meta["color2"])
    return (ok1 & (~meta["has2"] | ok2)).astype(jnp.float32)


def train_tiny_mmdit(key, n_steps: int = 3000, batch: int = 128, *, model: rf.TinyMMDiT | None = None,
                     lr: float = 1e-3, p_drop_ref: float = 0.3, p_drop_text: float = 0.1,
                     sigma_kind: str = "logit_normal", return_losses: bool = False, **model_kwargs: Any):
    """Train a :class:`TinyMMDiT` on the toy task with the RF loss (logit-normal sigma, AdamW, clip 1.0), one
    ``lax.scan`` over the steps; batches mix concept and described-shape prompts, the reference is dropped
    (zeroed) with probability ``p_drop_ref`` and the prompt with ``p_drop_text`` (for CFG)."""
    n_steps = check_int(n_steps, "n_steps", min_value=1)
    batch = check_int(batch, "batch", min_value=2)
    k_model, k_train = jax.random.split(key)
    model = rf.TinyMMDiT(k_model, vocab=24, **model_kwargs) if model is None else model
    params, static = eqx.partition(model, eqx.is_inexact_array)
    opt = rf.rf_optimizer(lr)

    def loss_fn(m, k, data):
        return rf.rf_loss(m, k, data["images"], (data["tokens"], data["ref"]), sigma_kind=sigma_kind)

    step = rf.rf_train_step(opt, static, loss_fn)

    def body(k, state):
        k1, k2, k3, k4, k5 = jax.random.split(k, 5)
        half = batch // 2
        a = make_shapes_batch(k1, half)
        b = make_shapes_batch(k2, batch - half, concept=False)
        data = jax.tree.map(lambda u, w: jnp.concatenate([u, w]), a, b)
        keep_ref = jax.random.uniform(k3, (batch, 1, 1, 1)) >= p_drop_ref
        keep_txt = jax.random.uniform(k4, (batch, 1)) >= p_drop_text
        data = {**data, "ref": data["ref"] * keep_ref, "tokens": data["tokens"] * keep_txt}
        return step(k5, state, data)

    state0 = rf.RFTrainState(params, opt.init(params))
    state, trace = jax.jit(lambda s, k: run(body, s, k, n_steps))(state0, k_train)
    losses = trace.infos
    trained = eqx.combine(state.params, static)
    return (trained, losses) if return_losses else trained
