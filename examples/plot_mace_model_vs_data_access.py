"""
Does access to the model leak more than its synthetic data?
===========================================================

MACE §6.2.1, Fig. 1b–c, on 8 × 8 digits. One overfit JS-GAN (trained on a random 10 % of
``load_digits``), two adversaries:

* **model access**: the discriminator score ``D(z)`` (MACE Eq. 3,
  :class:`~sklearn_mace.queries.DiscriminatorQuery`);
* **data access**: only 10 000 released synthetic images; the query is the distance to the
  nearest one (Eq. 2, :class:`~sklearn_mace.queries.NearestSyntheticDistance`);
* in between, **generator access** (GAN-leaks, §2.2.1): ``min_w ||z − G(w)||`` by latent
  optimisation (:class:`~sklearn_mace.queries.GeneratorReconstructionQuery`).

For each query: the optimal advantage U_N with its 95 % McDiarmid interval
(:class:`~sklearn_mace.KDEAdvantageEstimator`), the held-out advantage of the plug-in Bayes
adversary (5-fold cross-validation), and a heuristic adversary on the same query
(LOGAN's ``D(z) > 0``; "closer than the median distance" for the distance queries).

Shape of MACE's finding: access to the model leaks much more than access to synthetic
data, and the optimal advantage bounds the heuristics. Runs offline on CPU in about a minute.
"""

# %%
import os
import sys
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold, cross_val_score

from sklearn_mace import (
    DiscriminatorQuery,
    GeneratorReconstructionQuery,
    KDEAdvantageEstimator,
    NearestSyntheticDistance,
    membership_experiment,
)
from sklearn_mace.datasets import load_digit_images, split_members
from sklearn_mace.generative import JSGAN
from sklearn_mace.metrics import membership_advantage

torch.set_num_threads(1)  # small MLPs: one thread is fastest, most of all on a shared CPU
SEED = 0
# examples/output; sphinx-gallery runs an example from its folder without defining __file__
OUTPUT = Path(globals().get("__file__", "plot.py")).resolve().parent / "output"
# the GAN's progress bar in a terminal only: the docs' gallery captures it line by line
PROGRESS = int(sys.stderr.isatty())

# `make docs` runs the examples reduced (SKLEARN_MACE_EXAMPLES_QUICK=1, stated in the
# Makefile): fewer GAN epochs (the GAN overfits less), every number noisier than in full.
QUICK = os.environ.get("SKLEARN_MACE_EXAMPLES_QUICK", "0") not in ("", "0")
N_EPOCHS = 800 if QUICK else 2000
if QUICK:
    print("reduced mode (SKLEARN_MACE_EXAMPLES_QUICK=1): 800 GAN epochs instead of 2000")

digits = load_digit_images()
X = digits.data
is_member = split_members(len(X), train_fraction=0.1, random_state=SEED)
gan = JSGAN(n_epochs=N_EPOCHS, learning_rate=5e-4, random_state=SEED, verbose=PROGRESS)
gan.fit(X[is_member])
synthetic = gan.sample(10_000, random_state=SEED)

# %%
# Two queries on the same membership experiment (p = 0.5)
# -------------------------------------------------------
records, m = membership_experiment(X[is_member], X[~is_member], prior=0.5, random_state=SEED)
queries = {
    "D(z)  (model access, Eq. 3)": DiscriminatorQuery(gan.discriminator_),
    "min_w ||z - G(w)||  (generator, GAN-leaks)": GeneratorReconstructionQuery(
        gan.generator_,
        latent_dim=gan.latent_dim,
        n_restarts=5,
        n_steps=200,
        learning_rate=0.05,
        random_state=SEED,
    ),
    "min_j ||z - g_j||  (data access, Eq. 2)": NearestSyntheticDistance(synthetic),
}
# Heuristics: high discriminator score = member; close to the synthetic data = member.
heuristics = {
    "D(z)  (model access, Eq. 3)": lambda q: q > 0.0,
    "min_w ||z - G(w)||  (generator, GAN-leaks)": lambda q: q < np.median(q),
    "min_j ||z - g_j||  (data access, Eq. 2)": lambda q: q < np.median(q),
}
cv = StratifiedKFold(5, shuffle=True, random_state=SEED)
results = {}
for name, query in queries.items():
    Q = query.fit_transform(records)
    est = KDEAdvantageEstimator(random_state=SEED).fit(Q, m)
    held_out = cross_val_score(KDEAdvantageEstimator(random_state=SEED), Q, m, cv=cv)
    results[name] = dict(
        Q=Q[:, 0],
        U=est.advantage_estimate_,
        interval=est.advantage_estimate_interval_,
        held_out=held_out.mean(),
        heuristic=membership_advantage(m, heuristics[name](Q[:, 0])),
    )

print(
    f"\nJS-GAN on {is_member.sum()} digits, {len(synthetic)} synthetic images; "
    f"{m.sum()} members vs {(1 - m).sum()} non-members"
)
print(f"{'query':<44} {'U_N':>6} {'95% interval':>16} {'held-out':>9} {'heuristic':>9}")
for name, r in results.items():
    lo, hi = r["interval"]
    print(
        f"{name:<44} {r['U']:>6.3f} {f'[{lo:.3f}, {hi:.3f}]':>16} {r['held_out']:>9.3f} "
        f"{r['heuristic']:>9.3f}"
    )

# %%
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, axes = plt.subplots(1, 4, figsize=(18, 4))
for ax, (name, r) in zip(axes[:3], results.items(), strict=True):
    edges = np.histogram_bin_edges(r["Q"], bins=30)
    ax.hist(r["Q"][m == 1], bins=edges, alpha=0.6, label="members")
    ax.hist(r["Q"][m == 0], bins=edges, alpha=0.6, label="non-members")
    ax.set(title=name, xlabel="query value")
    ax.legend()
labels = ["discriminator", "generator", "synthetic data"]
width = 0.25
for k, (key, label) in enumerate(
    [("U", "U_N (optimal)"), ("held_out", "held-out optimal"), ("heuristic", "heuristic")]
):
    axes[3].bar(
        np.arange(3) + (k - 1) * width, [r[key] for r in results.values()], width, label=label
    )
axes[3].set_xticks(np.arange(3), labels)
axes[3].set(ylabel="membership advantage", title="Who leaks more")
axes[3].legend()
fig.tight_layout()
OUTPUT.mkdir(exist_ok=True)
fig.savefig(OUTPUT / "mace_model_vs_data_access.png", dpi=120)
print("figure: examples/output/mace_model_vs_data_access.png")
