"""
How much more than heuristic attacks does the optimal adversary get from D(z)?
==============================================================================

MACE §6.2.1, Fig. 1a, on 8 × 8 digits. A JS-GAN is trained long on a random 10 % of the
1 797 ``load_digits`` images (§6.1), so that it overfits. The adversary observes the
discriminator's score ``D(z)`` (MACE Eq. 3, :class:`~sklearn_mace.queries.DiscriminatorQuery`).

* **Continuous estimator** U_N (Thm 6): Gaussian KDEs of the query of members and
  non-members (:class:`~sklearn_mace.KDEAdvantageEstimator`).
* **Discrete estimator** W_N (Thm 5): the query binned (MACE uses 100 bins; with 180
  members per class we also show coarser binnings).
* Both with the McDiarmid 95 % interval (δ = 0.05), in a balanced membership experiment
  (Experiment 2 at p = 0.5: all 180 members and 180 non-members).
* **Optimal adversary, held out**: the plug-in Bayes classifier scored on folds it was not
  fitted on (5-fold cross-validation), an honest lower bound on what U_N claims.
* **Heuristic adversaries** (LOGAN, Hayes et al. 2019) on the same query: a fixed threshold
  ``D(z) > 0`` (discriminator probability above 1/2), and "top-n": the 180 highest scores.

Shape of MACE's finding: the optimal adversary's advantage is above the heuristics'.
Runs offline on CPU in about a minute; the figure goes to ``examples/output/``.
"""

# %%
import os
import sys
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold, cross_val_score

from sklearn_mace import DiscriminatorQuery, KDEAdvantageEstimator, membership_experiment
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

# %%
# The overfit GAN (MACE §6.1)
# ---------------------------
digits = load_digit_images()
X = digits.data
is_member = split_members(len(X), train_fraction=0.1, random_state=SEED)
gan = JSGAN(n_epochs=N_EPOCHS, learning_rate=5e-4, random_state=SEED, verbose=PROGRESS)
gan.fit(X[is_member])

# %%
# The query and the membership experiment
# ---------------------------------------
records, m = membership_experiment(X[is_member], X[~is_member], prior=0.5, random_state=SEED)
Q = DiscriminatorQuery(gan.discriminator_).fit_transform(records)

rows = []
continuous = KDEAdvantageEstimator(bandwidth="scott", random_state=SEED).fit(Q, m)
rows.append(
    (
        "U_N  continuous (KDE, Scott)",
        continuous.advantage_estimate_,
        continuous.advantage_estimate_interval_,
    )
)
for bins in (10, 30, 100):
    discrete = KDEAdvantageEstimator(bins=bins).fit(Q, m)
    rows.append(
        (
            f"W_N  discrete ({bins} bins)",
            discrete.advantage_estimate_,
            discrete.advantage_estimate_interval_,
        )
    )

cv = StratifiedKFold(5, shuffle=True, random_state=SEED)
held_out = cross_val_score(KDEAdvantageEstimator(random_state=SEED), Q, m, cv=cv)
rows.append(
    (
        "optimal adversary, held out (5-fold)",
        held_out.mean(),
        (held_out.mean() - held_out.std(), held_out.mean() + held_out.std()),
    )
)
fixed = membership_advantage(m, Q[:, 0] > 0.0)
top_n = membership_advantage(m, Q[:, 0] > np.sort(Q[:, 0])[-int(m.sum()) - 1])
rows.append(("LOGAN fixed threshold D(z) > 0", fixed, None))
rows.append(("LOGAN top-n (n = #members)", top_n, None))

print(
    f"\nJS-GAN on {is_member.sum()} digits; query D(z); {m.sum()} members vs "
    f"{(1 - m).sum()} non-members (p = 0.5)"
)
print(f"{'adversary / estimator':<38} {'advantage':>9}  {'95% interval (CV: ±1 sd)':>24}")
for name, value, interval in rows:
    band = f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""
    print(f"{name:<38} {value:>9.3f}  {band:>24}")
print(f"certified ε lower bound (substitute-one DP): {continuous.epsilon_lower_bound_:.2f}")
print(f"ε implied by U_N (an estimate, not a bound): {continuous.epsilon_estimate_:.2f}")

# %%
# Figure
# ------
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, (ax_q, ax_a) = plt.subplots(1, 2, figsize=(11, 4))
edges = np.histogram_bin_edges(Q[:, 0], bins=30)
ax_q.hist(Q[m == 1, 0], bins=edges, alpha=0.6, label="members")
ax_q.hist(Q[m == 0, 0], bins=edges, alpha=0.6, label="non-members")
ax_q.set(xlabel="discriminator logit D(z)", ylabel="records", title="The query")
ax_q.legend()
names = [r[0] for r in rows]
values = [r[1] for r in rows]
errors = np.array(
    [[v - r[2][0], r[2][1] - v] if r[2] else [0, 0] for v, r in zip(values, rows, strict=True)]
).T
ax_a.barh(names, values, xerr=errors, color=["C0"] * 4 + ["C2"] + ["C3"] * 2)
ax_a.invert_yaxis()
ax_a.set(xlabel="membership advantage", title="Optimal (blue/green) vs heuristic (red)")
fig.tight_layout()
OUTPUT.mkdir(exist_ok=True)
fig.savefig(OUTPUT / "mace_discrete_vs_continuous.png", dpi=120)
print("figure: examples/output/mace_discrete_vs_continuous.png")
