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
``NotImplementedError`` in 1.20.1). ART's ``ShadowModels`` and ``LabelOnlyDecisionBoundary``
are not run: the first cannot wrap an unfitted scikit-learn model in 1.20.1 (``nb_classes``
unknown), the second (HopSkipJump queries per record) was not timed here and is left out.

    /work/venvs/<venv with ART>/bin/python benchmarks/_art_peer.py TASK.joblib OUT.npz
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


def main(task, out):
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
    classifier = SklearnClassifier(model=data["target"])
    scores = {
        f"ART black-box {kind}, cross-fitted": _blackbox(classifier, kind, x, y, member, seed)
        for kind in ("nn", "rf", "gb")
    }
    rule = MembershipInferenceBlackBoxRuleBased(classifier)
    scores["ART rule-based"] = rule.infer(x, y).ravel().astype(float)
    np.savez(out, **scores)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
