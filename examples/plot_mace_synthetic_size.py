"""
Does releasing more synthetic data leak more?
=============================================

MACE App. H, Fig. 7, on 8 × 8 digits. One overfit JS-GAN (trained on a random 10 % of
``load_digits``) releases synthetic datasets of growing size; the adversary observes the
distance from a record to its nearest synthetic record (MACE Eq. 2,
:class:`~sklearn_mace.queries.NearestSyntheticDistance`). For each size the optimal
advantage U_N (:class:`~sklearn_mace.KDEAdvantageEstimator`) is averaged over 3 independent
synthetic draws.

A data publisher reads the curve the other way round: how much synthetic data can be
released for a given membership advantage. Runs offline on CPU in about a minute.
"""

# %%
import os
import sys
from pathlib import Path

import numpy as np
import torch

from sklearn_mace import KDEAdvantageEstimator, NearestSyntheticDistance, membership_experiment
from sklearn_mace.datasets import load_digit_images, split_members
from sklearn_mace.generative import JSGAN

torch.set_num_threads(1)  # small MLPs: one thread is fastest, most of all on a shared CPU
SEED = 0
SIZES = [10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000]
N_DRAWS = 3
# examples/output; sphinx-gallery runs an example from its folder without defining __file__
OUTPUT = Path(globals().get("__file__", "plot.py")).resolve().parent / "output"
# the GAN's progress bar in a terminal only: the docs' gallery captures it line by line
PROGRESS = int(sys.stderr.isatty())

# `make docs` runs the examples reduced (SKLEARN_MACE_EXAMPLES_QUICK=1, stated in the
# Makefile): fewer GAN epochs, release sizes up to 10 000 and 2 draws each, every number
# noisier than in the full run.
QUICK = os.environ.get("SKLEARN_MACE_EXAMPLES_QUICK", "0") not in ("", "0")
N_EPOCHS = 800 if QUICK else 2000
if QUICK:
    SIZES, N_DRAWS = SIZES[:-1], 2
    print(
        "reduced mode (SKLEARN_MACE_EXAMPLES_QUICK=1): 800 GAN epochs instead of 2000, "
        "sizes up to 10 000, 2 draws each"
    )

digits = load_digit_images()
X = digits.data
is_member = split_members(len(X), train_fraction=0.1, random_state=SEED)
gan = JSGAN(n_epochs=N_EPOCHS, learning_rate=5e-4, random_state=SEED, verbose=PROGRESS)
gan.fit(X[is_member])
records, m = membership_experiment(X[is_member], X[~is_member], prior=0.5, random_state=SEED)

# %%
results = []
for size in SIZES:
    values = []
    for draw in range(N_DRAWS):
        synthetic = gan.sample(size, random_state=1000 * draw + size)
        Q = NearestSyntheticDistance(synthetic).fit_transform(records)
        values.append(KDEAdvantageEstimator(random_state=SEED).fit(Q, m).advantage_estimate_)
    results.append((size, np.mean(values), np.std(values)))

half_width = KDEAdvantageEstimator().fit(Q, m)
lo, hi = half_width.advantage_estimate_interval_
print(
    f"\nJS-GAN on {is_member.sum()} digits; query: nearest-synthetic distance; "
    f"{m.sum()} members vs {(1 - m).sum()} non-members"
)
print(f"{'synthetic size':>14} {f'U_N (mean of {N_DRAWS})':>16} {'sd over draws':>14}")
for size, mean, sd in results:
    print(f"{size:>14} {mean:>16.3f} {sd:>14.3f}")
print(f"(McDiarmid 95% half-width of one estimate: {(hi - lo) / 2:.3f})")

# %%
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sizes, means, sds = (np.array(c) for c in zip(*results, strict=True))
fig, ax = plt.subplots(figsize=(6, 4))
ax.errorbar(sizes, means, yerr=sds, marker="o", capsize=4)
ax.set(
    xscale="log",
    xlabel="number of released synthetic images",
    ylabel="optimal membership advantage U_N",
    title="MACE App. H on digits",
)
fig.tight_layout()
OUTPUT.mkdir(exist_ok=True)
fig.savefig(OUTPUT / "mace_synthetic_size.png", dpi=120)
print("figure: examples/output/mace_synthetic_size.png")
