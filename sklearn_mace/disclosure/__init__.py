"""Disclosure risks beyond membership: singling out, linkability, inference (anonymeter's).

Each risk is an estimator fitted on a release; ``evaluate(targets, control)`` attacks the
records the release was generated from and control records of the same population that the
release cannot have seen (the non-members, never a reference sample the release may have
been built from) through it and reports anonymeter's risk ``(attack − control)/(1 −
control)`` with exact intervals.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._controls": ["ControlCopyWarning"],
        "._inference": ["AttributeInferenceRisk"],
        "._linkability": ["LinkabilityRisk"],
        "._singling_out": ["SinglingOutRisk", "singling_out_risk"],
        "._summary": ["disclosure_summary"],
    },
)
