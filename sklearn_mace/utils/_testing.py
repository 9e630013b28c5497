"""What every test module passes to ``parametrize_with_checks``.

One documented deviation for attackers, nothing blanket: membership-coded labels are
normalised so that ``[-1, 1]`` gives ``classes_ = [0, 1]`` (README, "Conventions"), whereas
``check_classifiers_classes`` expects ``classes_`` to echo ``[-1, 1]``. (Other label pairs,
strings included, are echoed as scikit-learn does.)
"""

from sklearn.base import is_classifier

__all__ = ["expected_failed_checks"]

_ATTACKER_DEVIATIONS = {
    "check_classifiers_classes": (
        "membership labels -1/1 are normalised to classes_ = [0, 1] (README, Conventions); the "
        "check expects classes_ to echo [-1, 1]"
    ),
}


def expected_failed_checks(estimator):
    """Checks an estimator is documented not to pass, with the reason (for pytest's xfail)."""
    return dict(_ATTACKER_DEVIATIONS) if is_classifier(estimator) else {}
