"""
Are atypical training images more exposed than the rest?
========================================================

MACE §6.3 and Fig. 4, on 8 × 8 digits. A random 10 % of ``load_digits`` is the training
set; 10 % of those training images get a white 4 × 4 box at their centre
(:func:`~sklearn_mace.datasets.add_white_box`); the non-training images are left as they
are. A JS-GAN is trained on this set, and the adversary observes the discriminator score
``D(z)`` (MACE Eq. 3).

The Bayes-optimal attack (:class:`~sklearn_mace.BayesOptimalMIA`, KDE densities) gives
every training image its individual privacy risk ``|f_p(z)|`` (MACE Thm 1.1) with a 95 %
interval (Thm 3, Lemma 4). The corrupted images form a small atypical subgroup: the
population-level advantage hides that they are at much higher risk than the rest.

Runs offline on CPU in about a minute; the figure goes to ``examples/output/``.
"""

# %%
import sys
from pathlib import Path

import numpy as np
import torch
from scipy.stats import mannwhitneyu

from sklearn_mace import BayesOptimalMIA, DiscriminatorQuery, KDEAdvantageEstimator
from sklearn_mace.datasets import add_white_box, load_digit_images, split_members
from sklearn_mace.generative import JSGAN

torch.set_num_threads(1)  # small MLPs: one thread is fastest, most of all on a shared CPU
SEED = 0
# examples/output; sphinx-gallery runs an example from its folder without defining __file__
OUTPUT = Path(globals().get("__file__", "plot.py")).resolve().parent / "output"
# the GAN's progress bar in a terminal only: the docs' gallery captures it line by line
PROGRESS = int(sys.stderr.isatty())

digits = load_digit_images()
X = digits.data
is_member = split_members(len(X), train_fraction=0.1, random_state=SEED)
train, is_corrupted = add_white_box(
    X[is_member], digits.image_shape, fraction=0.1, box_size=4, random_state=SEED
)
# Moderate training (500 epochs): the clean training images are only mildly overfit, while
# the few atypical corrupted ones are memorised — the situation Fig. 4 is about. (After
# 2 000 epochs every training image is memorised and D scores everything in the far tail.)
gan = JSGAN(n_epochs=500, learning_rate=5e-4, random_state=SEED, verbose=PROGRESS).fit(train)

# %%
# Individual risks of the training images
# ---------------------------------------
# Balanced experiment (p = 0.5): every training image and as many random non-members.
rng = np.random.default_rng(SEED)
others = X[~is_member][rng.choice((~is_member).sum(), size=len(train), replace=False)]
records = np.vstack([train, others])
m = np.r_[np.ones(len(train), dtype=int), np.zeros(len(others), dtype=int)]
Q = DiscriminatorQuery(gan.discriminator_).fit_transform(records)
attack = BayesOptimalMIA(density="kde", confidence=0.95).fit(Q, m)
risk, lower, upper = attack.individual_risk(Q[m == 1], return_interval=True)
advantage = KDEAdvantageEstimator(random_state=SEED).fit(Q, m)

print(
    f"\nJS-GAN on {len(train)} digits, {is_corrupted.sum()} of them with a white box; "
    f"query D(z); population U_N = {advantage.advantage_estimate_:.3f} "
    "[{:.3f}, {:.3f}]".format(*advantage.advantage_estimate_interval_)
)
print(
    f"{'training images':<16} {'n':>4} {'mean risk':>10} {'mean 95% interval':>20} "
    f"{'median risk':>12}"
)
for label, group in (("corrupted", is_corrupted), ("clean", ~is_corrupted)):
    print(
        f"{label:<16} {group.sum():>4} {risk[group].mean():>10.3f} "
        f"{f'[{lower[group].mean():.3f}, {upper[group].mean():.3f}]':>20} "
        f"{np.median(risk[group]):>12.3f}"
    )
test = mannwhitneyu(risk[is_corrupted], risk[~is_corrupted], alternative="greater")
print(f"Mann-Whitney U, corrupted > clean: p = {test.pvalue:.2g}")

# %%
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig = plt.figure(figsize=(12, 4.5))
shown = np.r_[np.flatnonzero(is_corrupted)[:4], np.flatnonzero(~is_corrupted)[:4]]
for k, i in enumerate(shown):
    ax = fig.add_subplot(2, 6, (k // 4) * 6 + k % 4 + 1)
    ax.imshow(train[i].reshape(digits.image_shape), cmap="gray", vmin=-1, vmax=1)
    ax.set_title(f"risk {risk[i]:.2f}", fontsize=9)
    ax.axis("off")
ax = fig.add_subplot(1, 3, 3)
means = [risk[is_corrupted].mean(), risk[~is_corrupted].mean()]
spans = np.array(
    [
        [mu - lower[g].mean(), upper[g].mean() - mu]
        for mu, g in zip(means, (is_corrupted, ~is_corrupted), strict=True)
    ]
).T
ax.bar(["corrupted", "clean"], means, yerr=spans, color=["C3", "C0"], capsize=6)
ax.set(ylabel="mean individual privacy risk |f_p|", title="MACE Fig. 4 on digits")
fig.suptitle("Training images (top row corrupted, bottom row clean) and their risk")
fig.tight_layout()
OUTPUT.mkdir(exist_ok=True)
fig.savefig(OUTPUT / "mace_individual_risk.png", dpi=120)
print("figure: examples/output/mace_individual_risk.png")
