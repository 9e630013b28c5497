"""Audit a training algorithm, not one output: shadow runs, worst-case targets, known-ε baselines.

:class:`AlgorithmAudit` trains a recipe (a generator or a classifier) many times with and
without a target record and certifies a lower bound on its ε; :class:`ReleaseFeatures`
featurizes each release; :func:`select_vulnerable_records` and :func:`make_canaries` pick the
targets; :class:`DPHistogramSynthesizer` (and its deliberately broken twin) are mechanisms of
known ε to check an audit against; :class:`DPSGDLogisticRegression` (and its noise bug) is a
DP-SGD trainer whose claim is opacus' accountant, audited in one run with
:func:`make_dirac_canaries` (black-box) or :class:`DPSGDGradientScores` (white-box: its
per-step noisy gradients), and :class:`DPSGDMLPClassifier` trains a small network the same
way; the adapters run sdv, ctgan and smartnoise-synth
generators as recipes when those packages are installed.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._adapters": ["CTGANGenerator", "SDVGenerator", "SmartNoiseGenerator"],
        "._audit": ["AlgorithmAudit"],
        "._claims": ["PrivacyClaim"],
        "._demo": ["dp_histogram_demo"],
        "._dpsgd": [
            "DPSGDLogisticRegression",
            "DPSGDMLPClassifier",
            "NoiseBugDPSGDLogisticRegression",
            "make_dirac_canaries",
        ],
        "._featurize": ["ReleaseFeatures"],
        "._mechanisms": ["DPHistogramSynthesizer", "WrongNoiseHistogramSynthesizer"],
        "._targets": ["make_canaries", "select_vulnerable_records", "vulnerability_scores"],
        "._whitebox": ["DPSGDGradientScores"],
    },
)
