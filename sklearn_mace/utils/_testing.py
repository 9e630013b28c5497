"""What every test module passes to ``parametrize_with_checks``.

One documented deviation for attackers, nothing blanket: membership labels are normalised
so that ``classes_`` is always ``[0, 1]`` (DESIGN.md) and string labels are rejected with
an error, whereas ``check_classifiers_classes`` expects ``classes_`` to echo arbitrary
labels such as ``["one", "two"]`` or ``[-1, 1]``.
"""

from sklearn.base import is_classifier

__all__ = ["expected_failed_checks"]

_ATTACKER_DEVIATIONS = {
    "check_classifiers_classes": (
        "membership labels are normalised: classes_ is always [0, 1] and string labels "
        "are rejected (DESIGN.md conventions)"
    ),
}


def expected_failed_checks(estimator):
    """Checks an estimator is documented not to pass, with the reason (for pytest's xfail)."""
    return dict(_ATTACKER_DEVIATIONS) if is_classifier(estimator) else {}
