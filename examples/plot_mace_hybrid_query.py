"""
Does a hybrid query (MACE Eq. 4) leak more than each of its parts?
==================================================================

MACE §6.2.1, Fig. 2b, on 8 × 8 digits. The adversary who has both the discriminator and the
synthetic data observes ``(D(z), min_j ||z − g_j||)`` — in scikit-learn terms a
``FeatureUnion`` of :class:`~sklearn_mace.queries.DiscriminatorQuery` and
:class:`~sklearn_mace.queries.NearestSyntheticDistance`. The optimal advantage of a query
can only grow when features are added (the Bayes classifier on the pair can ignore one of
them), so the hybrid's U_N should be at least each single query's, up to estimation noise.

U_N of the 2-D query is integrated by Monte Carlo from the pooled KDE
(:class:`~sklearn_mace.KDEAdvantageEstimator`, MACE Thm 6); the held-out column is the
plug-in Bayes adversary's advantage in 5-fold cross-validation of the whole
``Pipeline(query, estimator)``. Runs offline on CPU in about a minute.
"""

# %%
import os
import sys
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_mace import (
    DiscriminatorQuery,
    KDEAdvantageEstimator,
    NearestSyntheticDistance,
    membership_experiment,
)
from sklearn_mace.datasets import load_digit_images, split_members
from sklearn_mace.generative import JSGAN

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
records, m = membership_experiment(X[is_member], X[~is_member], prior=0.5, random_state=SEED)

# %%
# Single queries and the hybrid, each as a pipeline ending in the estimator
# -------------------------------------------------------------------------
# The features are standardised so that one KDE bandwidth rule suits both coordinates.
queries = {
    "D(z)  (Eq. 3)": DiscriminatorQuery(gan.discriminator_),
    "nearest synthetic  (Eq. 2)": NearestSyntheticDistance(synthetic),
    "hybrid (D, nearest)  (Eq. 4)": FeatureUnion(
        [
            ("discriminator", DiscriminatorQuery(gan.discriminator_)),
            ("nearest", NearestSyntheticDistance(synthetic)),
        ]
    ),
}
cv = StratifiedKFold(5, shuffle=True, random_state=SEED)
rows = []
for name, query in queries.items():
    audit = make_pipeline(query, StandardScaler(), KDEAdvantageEstimator(random_state=SEED))
    audit.fit(records, m)
    est = audit[-1]
    held_out = cross_val_score(audit, records, m, cv=cv)
    rows.append(
        (
            name,
            est.n_features_in_,
            est.advantage_estimate_,
            est.advantage_estimate_interval_,
            held_out.mean(),
            held_out.std(),
        )
    )

print(
    f"\nJS-GAN on {is_member.sum()} digits, {len(synthetic)} synthetic images; "
    f"{m.sum()} members vs {(1 - m).sum()} non-members"
)
print(f"{'query':<30} {'dim':>3} {'U_N':>6} {'95% interval':>16} {'held-out (±sd)':>16}")
for name, dim, U, (lo, hi), mean, sd in rows:
    print(
        f"{name:<30} {dim:>3} {U:>6.3f} {f'[{lo:.3f}, {hi:.3f}]':>16} "
        f"{f'{mean:.3f} ± {sd:.3f}':>16}"
    )

# %%
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

Q = queries["hybrid (D, nearest)  (Eq. 4)"].fit_transform(records)
fig, (ax_s, ax_b) = plt.subplots(1, 2, figsize=(11, 4))
ax_s.scatter(Q[m == 0, 0], Q[m == 0, 1], s=8, alpha=0.5, label="non-members")
ax_s.scatter(Q[m == 1, 0], Q[m == 1, 1], s=8, alpha=0.5, label="members")
ax_s.set(xlabel="D(z)", ylabel="distance to nearest synthetic", title="The hybrid query")
ax_s.legend()
names = [r[0] for r in rows]
U = np.array([r[2] for r in rows])
err = np.array([[u - r[3][0], r[3][1] - u] for u, r in zip(U, rows, strict=True)]).T
ax_b.barh(names, U, xerr=err, label="U_N (95% interval)")
ax_b.plot([r[4] for r in rows], names, "kD", label="held-out optimal adversary")
ax_b.invert_yaxis()
ax_b.set(xlabel="membership advantage", title="Single vs hybrid queries")
ax_b.legend(loc="lower right")
fig.tight_layout()
OUTPUT.mkdir(exist_ok=True)
fig.savefig(OUTPUT / "mace_hybrid_query.png", dpi=120)
print("figure: examples/output/mace_hybrid_query.png")
