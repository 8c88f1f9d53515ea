"""Value checks of the FACTS metrics hold eagerly and under ``jit`` (run-time errors naming the argument)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxlab.eval import (
    combine_splits,
    facts_score,
    facts_score_ci,
    grounding_score,
    multimodal_metrics,
    shortform_metrics,
)

SUBS = {"multimodal": 0.5, "parametric": 0.5, "search": 0.5, "grounding": 0.5}


def _both(fn, args, match):
    """``fn(*args)`` raises ``ValueError`` eagerly and an error with the same text under ``jax.jit``."""
    with pytest.raises(ValueError, match=match):
        fn(*args)
    with pytest.raises(Exception, match=match):
        jax.block_until_ready(jax.jit(fn)(*args))


def test_verdict_codes():
    _both(lambda v: shortform_metrics(v)["accuracy"], (jnp.array([0, 3]),), "verdicts must take values in")


def test_binary_codes():
    _both(lambda c: multimodal_metrics(c, jnp.array([1, 1]))["accuracy"], (jnp.array([1, 2]),),
          "coverage must take values in")
    _both(lambda e: grounding_score(e, jnp.ones((2, 2), int)), (jnp.array([[1, 0], [5, 1]]),),
          "eligible must take values in")


def test_mask_values_and_all_zero_mask():
    v = jnp.array([0, 1, 2])
    _both(lambda m: shortform_metrics(v, m)["accuracy"], (jnp.array([1.0, 0.5, 1.0]),), "mask must take values in")
    _both(lambda m: shortform_metrics(v, m)["accuracy"], (jnp.zeros(3),), "mask must select at least one item")


def test_split_scores_and_counts():
    _both(lambda p: combine_splits(p, 0.5), (jnp.asarray(1.5),), "public must lie in")
    _both(lambda q: combine_splits(0.5, q), (jnp.asarray(-0.1),), "private must lie in")
    _both(lambda n: combine_splits(0.5, 0.5, n, 10, mode="pooled"), (jnp.asarray(-1.0),), "n_public must lie in")
    _both(lambda n: combine_splits(0.5, 0.5, n, n, mode="pooled"), (jnp.asarray(0.0),),
          r"n_public \+ n_private must be > 0")


def test_subscores_in_range():
    _both(lambda x: facts_score({**SUBS, "search": x}), (jnp.asarray(1.2),), r"subscores\['search'\] must lie in")


def test_per_item_scores_in_range():
    items = {b: (np.full(4, 0.5), np.full(3, 0.5)) for b in SUBS}
    items["grounding"] = (np.array([0.5, 1.5, 0.0]), np.full(3, 0.5))
    with pytest.raises(ValueError, match=r"items\['grounding'\] public must lie in"):
        facts_score_ci(jax.random.key(0), items, n_boot=8)


def test_valid_inputs_unchanged_under_jit():
    v = jnp.array([[0, 1, 2, 0], [0, 0, 2, 1]])
    eager = shortform_metrics(v)
    jitted = jax.jit(shortform_metrics)(v)
    for k in eager:
        assert float(eager[k]) == float(jitted[k])
