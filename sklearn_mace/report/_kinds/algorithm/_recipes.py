"""The built-in training recipes of the algorithm audit, by the name the command line takes.

One list, read by the audit (``_audit.py``) and by its command line (``_cli.py``, the
choices of ``--recipe``); nothing heavier than ``importlib`` loads here, since the command
line imports it at its start.
"""

import importlib.util

__all__ = ["DPSGD", "HISTOGRAMS", "OPTIONAL", "RECIPES", "WHITE_BOX", "available_recipes"]

#: built-in recipes: CLI name -> name in the report (the wrong one's name says so)
RECIPES = {
    "dp-histogram": "DP histogram (Laplace noise, correct)",
    "wrong-noise-histogram": "DP histogram (wrong noise: half the scale)",
    "gaussian-mixture": "GaussianMixture (5 components, not DP)",
    "sdv": "sdv GaussianCopula",
    "ctgan": "CTGAN",
    "smartnoise": "smartnoise MST",
    "dpsgd-logreg": "DP-SGD logistic regression (opacus, σ from the accountant)",
    "dpsgd-logreg-noise-bug": "DP-SGD logistic regression (noise bug: σ/4, same claim)",
    "dpsgd-mlp": "DP-SGD MLP, 16 hidden units (opacus, σ from the accountant)",
}
#: the two histograms of known ε: the default recipes, calibrated to the claim
HISTOGRAMS = ("dp-histogram", "wrong-noise-histogram")
#: trainers of a classifier, audited in one run with Dirac canaries (``--design one-run``)
DPSGD = ("dpsgd-logreg", "dpsgd-logreg-noise-bug", "dpsgd-mlp")
#: the DP-SGD recipes that record their per-step noisy gradients (``--white-box``)
WHITE_BOX = ("dpsgd-logreg", "dpsgd-logreg-noise-bug")
#: the package each optional recipe needs (extras sdv, ctgan, smartnoise, dpsgd)
OPTIONAL = {"sdv": "sdv", "ctgan": "ctgan", "smartnoise": "snsynth"}
OPTIONAL.update(dict.fromkeys(DPSGD, "opacus"))


def available_recipes():
    """The built-in recipes usable here: the adapters only when their package is installed.

    Returns
    -------
    names : list of str
    """
    return [
        name
        for name in RECIPES
        if name not in OPTIONAL or importlib.util.find_spec(OPTIONAL[name]) is not None
    ]
