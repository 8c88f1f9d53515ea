# %% [markdown]
# # The FACTS Leaderboard: scoring a suite from per-item verdicts
#
# FACTS (Cheng et al., arXiv:2512.10791) scores factuality on four sub-leaderboards, each judged automatically:
# Multimodal ($\mathrm{acc} = \frac1n\sum_i \kappa_i\nu_i$, coverage times no-contradiction), Parametric and
# Search (SimpleQA-style verdicts, accuracy $= C/n$), and Grounding v2 ($\frac1J\sum_j \frac1n\sum_i
# e_{ij}g_{ij}$, ineligible answers count as inaccurate). Each sub-score averages the public and private
# splits, and the FACTS score is the mean of the four.
#
# No model can be queried offline, so this notebook recomputes a leaderboard from a synthetic verdict table
# (seeded). One synthetic model is given the announced profile of the top entry (Search 83.8 %, Parametric
# 76.4 %, Multimodal 46.9 %, Grounding chosen as 68.1 % so that the FACTS score is 68.8 %): its recomputed score
# should land near 68.8 %, within the joint bootstrap interval.

# %%
import time

import jax
import matplotlib.pyplot as plt
import numpy as np

from jaxlab.eval import (
    SUBBENCHMARKS,
    RuleJudge,
    facts_score_ci,
    judge_items,
    leaderboard,
    print_leaderboard,
    synthetic_verdicts,
)

t0 = time.perf_counter()
announced = {"multimodal": 0.469, "parametric": 0.764, "search": 0.838, "grounding": 0.681}
skills = {
    "announced-profile": announced,
    "synthetic-b": {"multimodal": 0.40, "parametric": 0.70, "search": 0.75, "grounding": 0.62},
    "synthetic-c": {"multimodal": 0.44, "parametric": 0.55, "search": 0.80, "grounding": 0.70},
    "synthetic-d": {"multimodal": 0.30, "parametric": 0.45, "search": 0.60, "grounding": 0.55},
}
table = synthetic_verdicts(0, skills, n_items=400, n_judges=3)
rows = leaderboard(table)
print_leaderboard(rows)
print(f"expected FACTS of the announced profile: {100 * np.mean(list(announced.values())):.1f} %")

# %% [markdown]
# Joint bootstrap (B = 1000): every benchmark and split is resampled independently; the interval is the
# 2.5 and 97.5 percentiles of the recomputed FACTS score.

# %%
cis = {}
for k, row in enumerate(rows):
    items = {b: tuple(table.item_scores(row.model, b, s) for s in ("public", "private")) for b in SUBBENCHMARKS}
    score, lo, hi = facts_score_ci(jax.random.key(k), items, n_boot=1000)
    cis[row.model] = (float(score), float(lo), float(hi))
    print(
        f"{row.model:18s} FACTS {100 * float(score):5.1f} %  95 % CI [{100 * float(lo):5.1f}, {100 * float(hi):5.1f}]"
    )

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
names = [r.model for r in rows]
score = np.array([cis[m][0] for m in names])
err = np.array([[cis[m][0] - cis[m][1], cis[m][2] - cis[m][0]] for m in names]).T
axes[0].barh(names[::-1], 100 * score[::-1], xerr=100 * err[:, ::-1], color="tab:blue", capsize=4)
axes[0].axvline(68.8, color="k", ls="--", lw=1, label="announced top score 68.8 %")
axes[0].set_xlabel("FACTS score (%), 95 % bootstrap CI")
axes[0].legend(loc="lower right")
w = 0.2
for j, b in enumerate(SUBBENCHMARKS):
    axes[1].bar(np.arange(len(rows)) + (j - 1.5) * w, [100 * getattr(r, b) for r in rows], w, label=b)
axes[1].set_xticks(range(len(rows)), names, rotation=15)
axes[1].set_ylabel("sub-score (%)")
axes[1].legend(fontsize=8, ncol=2)
fig.tight_layout()
plt.show()

# %% [markdown]
# Judges are pluggable callables (an LLM call in practice). The deterministic rule-based judge below stands in
# for one: it grades a few short-form answers into the same table format.

# %%
items = [
    {"model": "demo", "benchmark": "parametric", "split": "public", "item_id": str(k), "response": r, "gold": g}
    for k, (r, g) in enumerate([("It is Canberra.", "Canberra"), ("Sydney", "Canberra"), ("I don't know", "Oslo")])
]
demo = judge_items({"rule": RuleJudge()}, items)
print(demo.arrays("demo", "parametric", "public")["verdict"], "(0 correct, 1 incorrect, 2 not attempted)")

# %%
top = cis["announced-profile"]
print(f"announced profile: FACTS {100 * top[0]:.1f} % (announced 68.8 %), run time {time.perf_counter() - t0:.1f} s")
# Robust: the recomputed score is within 3 points of 68.8 % and the interval (width ~ 2 points) contains it.
assert abs(top[0] - 0.688) < 0.03, top
assert top[1] <= top[0] <= top[2] and 0.005 < top[2] - top[1] < 0.06, top
assert rows[0].model == "announced-profile"
