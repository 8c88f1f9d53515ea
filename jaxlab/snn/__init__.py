"""Spiking neural networks (area ``snn``): the Dormant Spiking Neuron (DSN) and plain LIF with surrogate-gradient
BPTT, synaptic-operation counting with the MAC/AC energy model, and a small conv DSN network with its training.

Modules: :mod:`~jaxlab.snn.neuron` (parameters, state, one step), :mod:`~jaxlab.snn.scan` (a sequence in one
scan with a hand-written BPTT), :mod:`~jaxlab.snn.energy` (SOPs and energy), :mod:`~jaxlab.snn.network` (the
conv network, its training and evaluation), :mod:`~jaxlab.snn.reference` (plain NumPy loops the claims compare
against). The digits datasets live in :mod:`jaxlab.data.digits` and are re-exported here.

Example::

    from jaxlab.snn import DSNParams, dsn_scan, sop_dense
    spikes, state, aux = dsn_scan(DSNParams(v_dormant=-0.05), x_seq)      # x_seq: (T, ...) input currents
    print("dormant:", 1 - aux["d_seq"].mean())
"""

from jaxlab.data.digits import digits_dataset, digits_events
from jaxlab.snn.energy import E_AC, E_MAC, energy_pj, sop_conv, sop_dense
from jaxlab.snn.network import (
    DSNConvNet,
    DSNTrainInfo,
    DSNTrainState,
    SpikeTrace,
    apply,
    energy_report,
    evaluate,
    fit,
    make_model,
    train_algorithm,
    trainable,
    trained_model,
)
from jaxlab.snn.neuron import (
    DSNParams,
    DSNState,
    DSNStepInfo,
    check_params,
    dsn_algorithm,
    dsn_init,
    dsn_step,
    heaviside_sg,
    lif_algorithm,
    lif_step,
)
from jaxlab.snn.scan import deep_inhibition_fraction, dormant_fraction, dsn_scan, lif_scan

__all__ = [
    "E_AC",
    "E_MAC",
    "DSNConvNet",
    "DSNParams",
    "DSNState",
    "DSNStepInfo",
    "DSNTrainInfo",
    "DSNTrainState",
    "SpikeTrace",
    "apply",
    "check_params",
    "deep_inhibition_fraction",
    "digits_dataset",
    "digits_events",
    "dormant_fraction",
    "dsn_algorithm",
    "dsn_init",
    "dsn_scan",
    "dsn_step",
    "energy_pj",
    "energy_report",
    "evaluate",
    "fit",
    "heaviside_sg",
    "lif_algorithm",
    "lif_scan",
    "lif_step",
    "make_model",
    "sop_conv",
    "sop_dense",
    "train_algorithm",
    "trainable",
    "trained_model",
]
