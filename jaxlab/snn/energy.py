r"""Synaptic operations (SOPs) with dormancy masking and the MAC/AC energy model of a spiking network.

Synaptic operations of a layer with presynaptic spikes ``s`` and postsynaptic gates ``D`` (the dormant gate of
:mod:`jaxlab.snn.neuron`; a dormant target is skipped)::

    SOP = sum_t sum_{j in post} D_{t,j} sum_{i in pre(j)} s_{t,i}
        = sum_t (sum_i s_{t,i}) (sum_j D_{t,j})                          (dense layer)

for a convolution the incoming count of an output position is a sum-pool of the channel-summed spike map with
the kernel's window, stride and padding. Energy (pJ)::

    E = E_MAC * MACs_first_layer + E_AC * sum_l SOP_l [+ E_AC * neuron updates],  E_MAC = 4.6, E_AC = 0.9.

``MACs_first_layer`` counts all T steps of the real-valued encoding layer. Setting every ``D = 1`` gives the
standard SOP count (firing rate x T x FLOPs) of a network without dormancy.

Papers: "The Dormant Spiking Neuron: A State-Driven Mechanism for Efficient Spiking Neural Networks"
(github.com/Ruichen0424/DSN; arXiv id not located) for the dormancy-masked counts; M. Horowitz, "Computing's
energy problem (and what we can do about it)", ISSCC 2014, for the 45 nm constants.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab.core.citations import cites
from jaxlab.core.types import Array, Float
from jaxlab.core.validation import as_array, check_int, check_positive, value_check
from jaxlab.snn.papers import DSN, HOROWITZ

__all__ = ["E_AC", "E_MAC", "energy_pj", "sop_conv", "sop_dense"]

E_MAC = 4.6
"""Energy of a 32-bit float multiply-accumulate at 45 nm, pJ (Horowitz 2014)."""
E_AC = 0.9
"""Energy of a 32-bit float accumulate at 45 nm, pJ (Horowitz 2014)."""


def _check_binary(x: Array, name: str) -> Array:
    """Return ``x``; raise unless every entry is 0 or 1, eagerly or under ``jit``."""
    msg = f"{name} must be binary (entries 0 or 1)"
    try:
        return value_check(x, lambda a: (a != 0) & (a != 1), msg)
    except ValueError:
        a = np.asarray(x)
        raise ValueError(f"{msg}, got values such as {a[(a != 0) & (a != 1)][0]!r}") from None


def _sop_inputs(spikes_in: Any, d_out: Any, min_ndim: int) -> tuple[Array, Array]:
    spikes_in = as_array(spikes_in, "spikes_in")
    d_out = as_array(d_out, "d_out")
    for name, a in (("spikes_in", spikes_in), ("d_out", d_out)):
        if a.ndim < min_ndim:
            raise ValueError(f"{name} must have at least {min_ndim} dimensions (time first), got {tuple(a.shape)}")
    if spikes_in.shape[0] != d_out.shape[0]:
        raise ValueError(f"spikes_in and d_out must have the same T, got {spikes_in.shape[0]} and {d_out.shape[0]}")
    spikes_in = _check_binary(spikes_in, "spikes_in")
    d_out = _check_binary(d_out, "d_out")
    return spikes_in, d_out


@cites(DSN)
def sop_dense(spikes_in: Float[Array, "T *b n_in"], d_out: Float[Array, "T *b n_out"]) -> Float[Array, ""]:
    """Synaptic operations of a dense layer with dormant targets skipped.

    ``SOP = Σ_{t,b} (Σ_i s_{t,b,i}) (Σ_j D_{t,b,j})``: every presynaptic spike reaches every awake target, the
    dormancy-masked count of "The Dormant Spiking Neuron: A State-Driven Mechanism for Efficient Spiking Neural
    Networks" (2026; arXiv id not located). Pass ``d_out = ones`` for the count without dormancy.

    Args:
      spikes_in: ``(T, *b, n_in)`` binary float array of presynaptic spikes.
      d_out: ``(T, *b, n_out)`` binary float array of postsynaptic gates ``D``.

    Returns:
      0-d float array, the total count over time and batch.

    Raises:
      TypeError: an input not floating.
      ValueError: fewer than 2 dimensions; different leading (time and batch) axes; non-binary entries.

    Example:
      >>> import jax.numpy as jnp
      >>> from jaxlab.snn import sop_dense
      >>> s = jnp.array([[[1.0, 0.0, 1.0]]])   # T = 1, B = 1: 2 of 3 inputs spike
      >>> d = jnp.array([[[1.0, 0.0]]])        # 1 of 2 targets awake
      >>> float(sop_dense(s, d))
      2.0
    """
    spikes_in, d_out = _sop_inputs(spikes_in, d_out, 2)
    if spikes_in.shape[:-1] != d_out.shape[:-1]:
        raise ValueError(
            f"spikes_in and d_out must agree on the time and batch axes, got {tuple(spikes_in.shape)} and "
            f"{tuple(d_out.shape)}"
        )
    return jnp.sum(jnp.sum(spikes_in, -1) * jnp.sum(d_out, -1))


def _pair(v: Any, name: str, min_value: int) -> tuple[int, int]:
    vals = (v, v) if isinstance(v, (int, np.integer)) else tuple(v)
    if len(vals) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
    return tuple(check_int(x, name, min_value=min_value) for x in vals)  # type: ignore[return-value]


@cites(DSN)
def sop_conv(
    spikes_in: Float[Array, "T B C H W"],
    d_out: Float[Array, "T B O Ho Wo"],
    kernel: int | Sequence[int],
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
) -> Float[Array, ""]:
    """Synaptic operations of a convolution (zero padding, no dilation, no groups) with dormant targets skipped.

    ``SOP = Σ_{t,b,o,h,w} D_{t,b,o,h,w} · (number of input spikes in the receptive field of (h, w))``, summed over input
    channels; the receptive-field count is a sum-pool of the channel-summed spike map with the kernel's window, stride
    and padding. The dormancy-masked count of "The Dormant Spiking Neuron: A State-Driven Mechanism for Efficient
    Spiking Neural Networks" (2026; arXiv id not located).

    Args:
      spikes_in: ``(T, B, C, H, W)`` binary float array of input spikes.
      d_out: ``(T, B, O, Ho, Wo)`` binary float array of output gates, with the conv's output spatial shape.
      kernel: kernel size, an int or a pair ``(kh, kw)`` (``≥ 1``).
      stride: stride, an int or a pair (``≥ 1``).
      padding: zero padding on each side, an int or a pair (``≥ 0``).

    Returns:
      0-d float array, the total count.

    Raises:
      TypeError: an input not floating; a size not an int.
      ValueError: inputs not 5-d, with different ``T`` (or ``B``), non-binary entries, or ``d_out`` of the wrong
        spatial shape; a size below its minimum or not an int or pair.
    """
    spikes_in, d_out = _sop_inputs(spikes_in, d_out, 5)
    if spikes_in.ndim != 5 or d_out.ndim != 5:
        raise ValueError(f"spikes_in and d_out must be (T, B, C, H, W), got {spikes_in.shape} and {d_out.shape}")
    (kh, kw), (sh, sw), (ph, pw) = _pair(kernel, "kernel", 1), _pair(stride, "stride", 1), _pair(padding, "padding", 0)
    counts = jax.lax.reduce_window(
        jnp.sum(spikes_in, 2),
        jnp.zeros((), spikes_in.dtype),
        jax.lax.add,
        (1, 1, kh, kw),
        (1, 1, sh, sw),
        ((0, 0), (0, 0), (ph, ph), (pw, pw)),
    )
    if counts.shape[:2] != d_out.shape[:2] or counts.shape[2:] != d_out.shape[3:]:
        raise ValueError(
            f"d_out must have shape (T, B, O, {counts.shape[2]}, {counts.shape[3]}) for this kernel/stride/padding "
            f"and T, B = {tuple(counts.shape[:2])}, got {tuple(d_out.shape)}"
        )
    return jnp.sum(counts * jnp.sum(d_out, 2))


@cites(DSN, HOROWITZ)
def energy_pj(
    first_layer_flops: Any,
    sops: Any,
    neuron_updates: Any = None,
    *,
    e_mac: float = E_MAC,
    e_ac: float = E_AC,
) -> Float[Array, ""]:
    """Energy in pJ: ``e_mac · first_layer_flops + e_ac · sops [+ e_ac · neuron_updates]``.

    The MAC/AC model with 45 nm constants (``E_MAC = 4.6`` pJ, ``E_AC = 0.9`` pJ) of M. Horowitz, "Computing's energy
    problem (and what we can do about it)", ISSCC 2014.

    Args:
      first_layer_flops: the multiply-accumulates of the real-valued encoding layer over all ``T`` steps
        (a number or numeric array ``≥ 0``).
      sops: the synaptic operations of the spiking layers (:func:`sop_dense`, :func:`sop_conv`), ``≥ 0``.
      neuron_updates: optional count of awake neuron updates ``Σ_{t,j} D_{t,j}``, ``≥ 0``.
      e_mac: energy of one MAC in pJ (``≥ 0``).
      e_ac: energy of one accumulate in pJ (``≥ 0``).

    Returns:
      Float array of the broadcast shape of the counts (0-d for scalars), in pJ.

    Raises:
      TypeError: a count not numeric.
      ValueError: a count is negative or not finite, or an energy constant is negative (eagerly; under ``jit``
        a run-time error with the same text).

    Example:
      >>> from jaxlab.snn import energy_pj
      >>> round(float(energy_pj(1000.0, 5000.0)), 1)   # 4.6 pJ x 1000 MACs + 0.9 pJ x 5000 SOPs
      9100.0
    """
    e_mac = check_positive(e_mac, "e_mac", strict=False)
    e_ac = check_positive(e_ac, "e_ac", strict=False)
    terms = [("first_layer_flops", first_layer_flops, e_mac), ("sops", sops, e_ac)]
    if neuron_updates is not None:
        terms.append(("neuron_updates", neuron_updates, e_ac))
    total = 0.0  # weakly typed: the counts' float dtype (a default-dtype zero promoted float32 counts)
    for name, count, e in terms:
        count = as_array(count, name, kind="number", finite=True)
        try:
            count = value_check(count, lambda a: a < 0, f"{name} must be >= 0")
        except ValueError:
            raise ValueError(f"{name} must be >= 0, got {float(np.min(np.asarray(count)))!r}") from None
        total = total + e * count
    return total
