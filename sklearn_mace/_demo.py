"""The placeholder main job: measure the leakage of an overfit classifier on bundled data.

Replaced by the full ``sklearn-mace audit`` report once that exists.
"""

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import cross_val_predict, train_test_split

from .experiment import membership_experiment
from .metrics import epsilon_lower_bound, membership_advantage, tpr_at_fpr


def run_demo(random_state=0):
    """Train a leaky model on half of breast cancer, attack it, print the leakage."""
    X, y = load_breast_cancer(return_X_y=True)
    X_in, X_out, y_in, y_out = train_test_split(X, y, test_size=0.5, random_state=random_state)
    model = RandomForestClassifier(n_estimators=50, random_state=random_state).fit(X_in, y_in)

    def true_label_confidence(X_, y_):  # the adversary's query Q_S(z): P(true label | x)
        return model.predict_proba(X_)[np.arange(len(y_)), y_].reshape(-1, 1)

    members = true_label_confidence(X_in, y_in)
    non_members = true_label_confidence(X_out, y_out)
    Q, m = membership_experiment(members, non_members, prior=0.5, random_state=random_state)
    attacker = LogisticRegression()
    score = cross_val_predict(attacker, Q, m, cv=5, method="decision_function")
    advantage = membership_advantage(m, score > 0)
    rows = [
        ("training accuracy", model.score(X_in, y_in)),
        ("hold-out accuracy", model.score(X_out, y_out)),
        ("membership advantage (5-fold)", advantage),
        ("AUC", roc_auc_score(m, score)),
        ("TPR at 1% FPR", tpr_at_fpr(m, score, fpr=0.01)),
        ("epsilon lower bound", epsilon_lower_bound(max(advantage, 0.0))),
    ]
    print("sklearn-mace demo: random forest on breast cancer, query = true-label confidence")
    print(f"members={int(m.sum())} non-members={int(len(m) - m.sum())} prior=0.5")
    for name, value in rows:
        print(f"  {name:<32}{value:8.3f}")
    return dict(rows)
