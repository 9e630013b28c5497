"""compare_attacks on hand-computed scores, and the fit path on planted data."""

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline

from sklearn_mace.attacks import DOMIASAttack, ThresholdAttack, compare_attacks
from sklearn_mace.datasets import make_planted_leak
from sklearn_mace.queries import DOMIASQuery, GANLeaksQuery, NearestSyntheticDistance

M = np.array([1, 1, 1, 0, 0, 0, 1, 0])
SCORE = np.array([0.9, 0.8, 0.3, 0.7, 0.2, 0.1, 0.6, 0.4])
GROUPS = np.array(["a", "a", "a", "a", "b", "b", "b", "b"])
X = np.zeros((8, 1))


def test_metrics_on_hand_computed_scores():
    table = compare_attacks({"s": SCORE}, X, M, groups=GROUPS, fpr=(0.25,), top_q=(0.25,))
    overall = table[table.group == "all"].iloc[0]
    # Pairs (member, non-member) ranked correctly: 0.9 and 0.8 beat all 4 non-members, 0.6
    # beats 0.4, 0.2, 0.1, and 0.3 beats 0.2, 0.1 → (4 + 4 + 3 + 2) / 16.
    assert overall.auc == pytest.approx(13 / 16)
    # Median 0.5: guesses members 0.9, 0.8, 0.7, 0.6 → wrong on 0.7 and 0.3 → 6/8.
    assert overall.accuracy_median == pytest.approx(6 / 8)
    # FPR <= 1/4 allows one false positive (0.7): TPR 3/4 at threshold 0.6.
    assert overall["tpr_at_25pct_fpr"] == pytest.approx(3 / 4)
    assert overall["precision_top_25pct"] == pytest.approx(1.0)  # 0.9, 0.8
    a = table[table.group == "a"].iloc[0]
    # Group a: members 0.9, 0.8, 0.3, non-member 0.7: AUC 2/3; global median 0.5 → 0.3
    # missed, 0.7 wrong → 2/4.
    assert (a.n_samples, a.n_members) == (4, 3)
    assert a.auc == pytest.approx(2 / 3)
    assert a.accuracy_median == pytest.approx(0.5)
    assert np.isnan(a.fit_time)


def test_groups_lacking_a_class_get_nan_auc():
    # NaN marks the cells that do not apply (documented), the rest of the row is filled in.
    table = compare_attacks({"s": SCORE}, X, M, groups=np.r_[np.zeros(3), np.ones(5)], fpr=0.25)
    members_only = table[table.group == 0].iloc[0]
    assert np.isnan(members_only.auc) and np.isnan(members_only["tpr_at_25pct_fpr"])
    # Global median 0.5: of 0.9, 0.8, 0.3 (all members) two are guessed right.
    assert members_only.accuracy_median == pytest.approx(2 / 3)
    assert members_only["precision_top_10pct"] == pytest.approx(1.0)
    assert table[table.group == 1].auc.notna().all()


def test_fits_queries_and_attackers_and_calls_oracles():
    data = make_planted_leak(100, 100, 800, 800, n_features=3, random_state=0)
    syn, ref = data.synthetic, data.reference
    fitted = DOMIASAttack(syn, ref, device="cpu").fit(data.X_test)
    table = compare_attacks(
        {
            "oracle": data.oracle,
            "DOMIAS query": DOMIASQuery(syn, ref, device="cpu"),
            "DOMIAS attack": DOMIASAttack(syn, ref, threshold="median", device="cpu"),
            "DOMIAS fitted": fitted,
            "DOMIAS rule": make_pipeline(DOMIASQuery(syn, ref, device="cpu"), ThresholdAttack()),
            "GAN-leaks CAL": GANLeaksQuery(syn, ref, device="cpu"),
        },
        data.X_test,
        data.membership,
    )
    assert isinstance(table, pd.DataFrame)
    assert list(table.attack)[:2] == ["oracle", "DOMIAS query"]
    assert table.auc.between(0, 1).all()
    assert table.set_index("attack").loc["oracle", "auc"] == pytest.approx(
        np.mean(data.oracle_score[:100, None] > data.oracle_score[None, 100:])
    )
    # The query's column, the attacker's decision_function and the pipeline's rank alike.
    assert table.auc.iloc[1:5].nunique() == 1
    # Fitted here (clones), used as fitted, or not fitted at all (callables).
    assert np.isnan(table.fit_time.iloc[0]) and np.isnan(table.fit_time.iloc[3])
    assert table.fit_time.iloc[[1, 2, 4, 5]].notna().all()


def test_a_query_with_several_columns_is_refused():
    data = make_planted_leak(20, 20, 100, 100, n_features=2, random_state=0)
    with pytest.raises(ValueError, match="one score column"):
        compare_attacks(
            {"knn": NearestSyntheticDistance(data.synthetic, k=2)}, data.X_test, data.membership
        )


def test_bad_inputs():
    with pytest.raises(TypeError, match="non-empty dict"):
        compare_attacks([SCORE], X, M)
    with pytest.raises(ValueError, match="7 labels for 8 rows"):
        compare_attacks({"s": SCORE}, X, M[:7])
    with pytest.raises(ValueError, match="'s' gave 8 scores \\(not finite: 1\\)"):
        compare_attacks({"s": np.r_[SCORE[:7], np.nan]}, X, M)
    with pytest.raises(ValueError, match="not finite: 1"):
        compare_attacks({"s": np.r_[SCORE[:7], np.inf]}, X, M)
    with pytest.raises(TypeError, match="'nb' is an estimator without decision_function"):
        compare_attacks({"nb": GaussianNB()}, X, M)
    with pytest.raises(ValueError, match="fpr and top_q"):
        compare_attacks({"s": SCORE}, X, M, top_q=0.0)
