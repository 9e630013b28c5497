"""ART 1.20.1's membership attacks on saved targets: the peer side of ``bench_peers_lira.py``.

Run by ``bench_peers_lira.py`` in a separate interpreter that has ART
(``--art-python``), never imported by the package. It reads a joblib file per (model, seed)
holding the fitted target, the 1 200 target records (inputs, label last) and their
membership, and writes one score per target record and ART attack:

* ``MembershipInferenceBlackBox`` with ``attack_model_type`` ``"nn"``, ``"rf"`` and ``"gb"``
  (input: the target's probability vector and the label), cross-fitted: the attack model
  is trained on the members and non-members of one half of the targets and scores the
  other half, then the halves swap (every record is scored by a model that never saw its
  membership label);
* ``MembershipInferenceBlackBoxRuleBased`` (member if the target predicts the label right).

``input_type="loss"`` is not offered for scikit-learn models (``compute_loss`` raises
``NotImplementedError`` in 1.20.1). ART's ``ShadowModels`` is not run: it cannot wrap an
unfitted scikit-learn model in 1.20.1 (``nb_classes`` unknown).

With ``--label-only MAX_ITER`` it runs ART's label-only attack instead,
``LabelOnlyDecisionBoundary`` (Choquette-Choo et al., ICML 2021, §4.2 "boundary distance"; Li
& Zhang, CCS 2021): HopSkipJump (Chen, Jordan & Wainwright, S&P 2020) from the predicted
labels alone finds, for every target record, the nearest input whose predicted label differs
(L2, inputs clipped to [0, 1]); the score is that distance (0 when the label is already
wrong), read back from ``infer(..., probabilities=True)`` (a sigmoid of the distance minus
the threshold, monotone, so the AUC and TPR are the distance's). HopSkipJump's budget:
``max_iter`` iterations, ``max_eval`` = 100·``max_iter`` queries per gradient estimate,
``init_eval`` 20.

    /work/venvs/<venv with ART>/bin/python benchmarks/_art_peer.py TASK.joblib OUT.npz
    /work/venvs/<venv with ART>/bin/python benchmarks/_art_peer.py TASK OUT --label-only 10
"""

import sys
import warnings

import joblib
import numpy as np


def _blackbox(classifier, kind, x, y, member, seed):
    from art.attacks.inference.membership_inference import MembershipInferenceBlackBox

    rng = np.random.default_rng(seed)
    fold = np.zeros(len(x), dtype=int)
    for side in (True, False):  # stratified halves
        index = np.flatnonzero(member == side)
        fold[rng.permutation(index)[: len(index) // 2]] = 1
    scores = np.empty(len(x))
    for train in (0, 1):
        fit, score = fold == train, fold != train
        attack = MembershipInferenceBlackBox(classifier, attack_model_type=kind)
        attack.fit(x[fit & member], y[fit & member], x[fit & ~member], y[fit & ~member])
        scores[score] = attack.infer(x[score], y[score], probabilities=True).ravel()
    return scores


def _boundary(classifier, x, y, max_iter):
    """ART's decision-boundary attack: the HopSkipJump distance of every record."""
    from art.attacks.inference.membership_inference import LabelOnlyDecisionBoundary

    tau = 1.0  # any positive threshold: the sigmoid of (distance − tau) keeps the order
    attack = LabelOnlyDecisionBoundary(classifier, distance_threshold_tau=tau)
    budget = dict(max_iter=max_iter, max_eval=100 * max_iter, init_eval=20, verbose=False)
    proba = attack.infer(x, y, probabilities=True, **budget)[:, 1]
    proba = np.clip(proba, 1e-300, 1 - 1e-16)
    return tau + np.log(proba) - np.log1p(-proba)  # the distance back from its sigmoid


def main(task, out, label_only=None):
    import torch
    from art.attacks.inference.membership_inference import MembershipInferenceBlackBoxRuleBased
    from art.estimators.classification import SklearnClassifier

    warnings.simplefilter("ignore")
    data = joblib.load(task)
    seed = int(data["seed"])
    np.random.seed(seed)  # noqa: NPY002 (ART draws from the legacy global generator)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    records, member = data["targets"], data["member"].astype(bool)
    x, y = records[:, :-1].astype(np.float32), records[:, -1].astype(int)
    if label_only is not None:  # HopSkipJump's inputs stay in the pixels' range
        classifier = SklearnClassifier(model=data["target"], clip_values=(0.0, 1.0))
        name = f"ART label-only decision boundary (HopSkipJump, {label_only} iterations)"
        np.savez(out, **{name: _boundary(classifier, x, y, label_only)})
        return
    classifier = SklearnClassifier(model=data["target"])
    scores = {
        f"ART black-box {kind}, cross-fitted": _blackbox(classifier, kind, x, y, member, seed)
        for kind in ("nn", "rf", "gb")
    }
    rule = MembershipInferenceBlackBoxRuleBased(classifier)
    scores["ART rule-based"] = rule.infer(x, y).ravel().astype(float)
    np.savez(out, **scores)


if __name__ == "__main__":
    budget = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--label-only" else None
    main(sys.argv[1], sys.argv[2], label_only=budget)
