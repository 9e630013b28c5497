"""scikit-learn's private helpers, reached from this one module.

scikit-learn keeps parameter validation, ``_fit_context`` and a few validation helpers
private; they move between releases. Every module of the package imports them from here,
so a change in scikit-learn is absorbed in one place: through ``sklearn_compat``
(imbalanced-learn's shim, which follows scikit-learn's releases) where it provides them, and
from scikit-learn itself for the rest.
"""

from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils._response import _get_response_values_binary
from sklearn.utils.validation import _num_samples
from sklearn_compat.base import _fit_context
from sklearn_compat.utils._param_validation import validate_params

__all__ = [
    "HasMethods",
    "Interval",
    "StrOptions",
    "_fit_context",
    "_get_response_values_binary",
    "_num_samples",
    "validate_params",
]
