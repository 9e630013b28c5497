"""Displays in scikit-learn's style: ``from_estimator`` -> ``from_predictions`` -> ``plot``."""

from ._advantage import AdvantageDisplay
from ._risk import IndividualRiskDisplay
from ._roc import MembershipRocDisplay

__all__ = ["AdvantageDisplay", "IndividualRiskDisplay", "MembershipRocDisplay"]
