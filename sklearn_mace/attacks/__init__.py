"""Membership-inference attackers: estimators on query features."""

from ._btta import BTTAttack, TakeTheTypicalAttack, btta_expected_metrics
from ._shadow import ShadowModelAttack, ShadowModels

__all__ = [
    "BTTAttack",
    "ShadowModelAttack",
    "ShadowModels",
    "TakeTheTypicalAttack",
    "btta_expected_metrics",
]
