"""Tiny torch modules for the query tests (module level, so that they pickle)."""

import numpy as np
import torch

from sklearn_mace.utils._testing import expected_failed_checks


class RowMean(torch.nn.Module):
    """``scale · mean(x) + shift``: a one-parameter linear discriminator for any record width.

    What the estimator checks can construct: they fit on data of many widths, and this module
    accepts them all.
    """

    def __init__(self, scale=1.0, shift=0.0):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(float(scale)))
        self.shift = torch.nn.Parameter(torch.tensor(float(shift)))

    def forward(self, x):
        return self.scale * x.mean(dim=1) + self.shift


class NaNGenerator(torch.nn.Module):
    """A generator whose output is NaN: must be rejected, never turned into a query value."""

    def __init__(self, n_features):
        super().__init__()
        self.linear = torch.nn.Linear(2, n_features)

    def forward(self, w):
        return self.linear(w) * torch.nan


# Record width of the data each estimator check fits on (read from the checks' data), for
# queries tied to a fixed width (a synthetic set, a generator) — the same device as
# scikit-learn's own PER_ESTIMATOR_CHECK_PARAMS for SparseCoder(dictionary): the artifact is
# built with the width the check uses. Checks not listed use 3 features.
CHECK_WIDTHS = {
    "check_estimators_overwrite_params": 2,
    "check_estimators_fit_returns_self": 2,
    "check_readonly_memmap_input": 2,
    "check_fit_idempotent": 2,
    "check_fit_check_is_fitted": 2,
    "check_n_features_in": 2,
    "check_n_features_in_after_fitting": 4,
    "check_positive_only_tag_during_fit": 4,
    "check_estimators_dtypes": 5,
    "check_dtype_object": 10,
    "check_fit2d_1sample": 10,
    # classifier checks (DOMIASAttack holds synthetic and reference rows)
    "check_classifier_data_not_an_array": 2,
    "check_classifiers_classes": 2,
    "check_classifiers_train": 2,
    "check_requires_y_none": 2,
    "check_classifiers_regression_target": 10,
    "check_classifier_not_supporting_multiclass": 20,
    "check_supervised_y_no_nan": 5,
}

# Torch modules pickle their storages by memory address, so joblib.hash of a deep copy of a
# module never equals the hash of the module: check_estimators_overwrite_params cannot tell
# whether a module parameter was modified. test_fit_and_transform_leave_module_untouched
# checks the same property on the module's state_dict instead.
TORCH_MODULE_DEVIATIONS = {
    "check_estimators_overwrite_params": (
        "joblib.hash of a torch module differs from that of its deep copy (storages are "
        "pickled by address); the module's state is checked unchanged by "
        "test_fit_and_transform_leave_module_untouched instead"
    ),
}


def query_expected_failed_checks(estimator):
    """The project-wide deviations plus the torch-module one for module-holding queries."""
    failed = dict(expected_failed_checks(estimator))
    if any(isinstance(v, torch.nn.Module | list) for v in estimator.get_params().values()):
        failed.update(TORCH_MODULE_DEVIATIONS)
    return failed


def check_name(check):
    return getattr(check, "func", check).__name__


def width_for(check):
    return CHECK_WIDTHS.get(check_name(check), 3)


def synthetic_of_width(width, n=20, seed=0):
    return np.random.default_rng(seed).normal(size=(n, width))


def with_check_width(estimator, check):
    """``estimator`` with every constructor data set (``synthetic``, ``reference``, also nested
    in a pipeline) replaced by random rows of the width of the check's data."""
    width = width_for(check)
    params = {}
    for key, value in estimator.get_params(deep=True).items():
        name = key.rsplit("__", 1)[-1]
        if name in ("synthetic", "reference") and isinstance(value, np.ndarray):
            params[key] = synthetic_of_width(width, seed=int(name == "reference") + 1)
    return estimator.set_params(**params)
