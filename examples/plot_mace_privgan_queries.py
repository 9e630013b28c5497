"""
Do two discriminators leak more as a vector (Eq. 6) than as their max (Eq. 5)?
==============================================================================

MACE §6.2.1, Fig. 2a, on 8 × 8 digits. A privGAN-style model
(:class:`~sklearn_mace.generative.PrivGAN`: two generator–discriminator pairs, each trained on
half of the training set, plus a privacy discriminator the generators must fool) is trained
on a random 10 % of ``load_digits``.

* **max query** ``max_i D_i(z)`` (MACE Eq. 5) — the one the privGAN paper audits;
* **vector query** ``(D_1(z), D_2(z))`` (MACE Eq. 6) — each discriminator has seen only its
  half, so a member scores high on one coordinate and typically on the other.

Both are :class:`~sklearn_mace.queries.MultiDiscriminatorQuery` (``reduce="max"`` or
``None``). U_N of the 2-D query is integrated by Monte Carlo from the pooled KDE
(:class:`~sklearn_mace.KDEAdvantageEstimator`); the held-out column is the plug-in Bayes
adversary in 5-fold cross-validation. Runs offline on CPU in about a minute.
"""

# %%
import os
import sys
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold, cross_val_score

from sklearn_mace import KDEAdvantageEstimator, MultiDiscriminatorQuery, membership_experiment
from sklearn_mace.datasets import load_digit_images, split_members
from sklearn_mace.generative import PrivGAN

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
gan = PrivGAN(
    n_splits=2, n_epochs=N_EPOCHS, learning_rate=5e-4, random_state=SEED, verbose=PROGRESS
)
gan.fit(X[is_member])
records, m = membership_experiment(X[is_member], X[~is_member], prior=0.5, random_state=SEED)

# %%
queries = {
    "max_i D_i(z)  (Eq. 5)": MultiDiscriminatorQuery(gan.discriminators_, reduce="max"),
    "(D_1(z), D_2(z))  (Eq. 6)": MultiDiscriminatorQuery(gan.discriminators_, reduce=None),
}
cv = StratifiedKFold(5, shuffle=True, random_state=SEED)
rows = []
for name, query in queries.items():
    Q = query.fit_transform(records)
    est = KDEAdvantageEstimator(random_state=SEED).fit(Q, m)
    held_out = cross_val_score(KDEAdvantageEstimator(random_state=SEED), Q, m, cv=cv)
    rows.append(
        (
            name,
            Q.shape[1],
            est.advantage_estimate_,
            est.advantage_estimate_interval_,
            held_out.mean(),
            held_out.std(),
        )
    )

print(
    f"\nprivGAN (2 pairs) on {is_member.sum()} digits; {m.sum()} members vs "
    f"{(1 - m).sum()} non-members"
)
print(f"{'query':<28} {'dim':>3} {'U_N':>6} {'95% interval':>16} {'held-out (±sd)':>16}")
for name, dim, U, (lo, hi), mean, sd in rows:
    print(
        f"{name:<28} {dim:>3} {U:>6.3f} {f'[{lo:.3f}, {hi:.3f}]':>16} "
        f"{f'{mean:.3f} ± {sd:.3f}':>16}"
    )

# %%
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

V = queries["(D_1(z), D_2(z))  (Eq. 6)"].transform(X)
fig, (ax_s, ax_b) = plt.subplots(1, 2, figsize=(11, 4.5))
ax_s.scatter(V[~is_member, 0], V[~is_member, 1], s=5, alpha=0.3, c="grey", label="non-members")
for i in range(2):
    part = np.flatnonzero(is_member)[gan.split_ == i]
    ax_s.scatter(V[part, 0], V[part, 1], s=12, label=f"members seen by D_{i + 1}")
ax_s.set(xlabel="D_1(z)", ylabel="D_2(z)", title="The vector query")
ax_s.legend()
names = [r[0] for r in rows]
U = np.array([r[2] for r in rows])
err = np.array([[u - r[3][0], r[3][1] - u] for u, r in zip(U, rows, strict=True)]).T
ax_b.barh(names, U, xerr=err, label="U_N (95% interval)")
ax_b.plot([r[4] for r in rows], names, "kD", label="held-out optimal adversary")
ax_b.invert_yaxis()
ax_b.set(xlabel="membership advantage", title="privGAN: max vs vector query")
ax_b.legend(loc="lower right")
fig.tight_layout()
OUTPUT.mkdir(exist_ok=True)
fig.savefig(OUTPUT / "mace_privgan_queries.png", dpi=120)
print("figure: examples/output/mace_privgan_queries.png")
