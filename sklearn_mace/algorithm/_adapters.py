"""Third-party generators as recipes: sdv, ctgan and smartnoise-synth behind ``fit``/``sample``.

Each adapter is a scikit-learn estimator with ``fit(X)`` and ``sample(n_samples)`` on NumPy
arrays, so :class:`AlgorithmAudit` can clone it, seed it and train it thousands of times. The
package it wraps is imported inside ``fit`` (extras ``sdv``, ``ctgan``, ``smartnoise``):
``import sklearn_mace.algorithm`` needs none of them.

Seeds. A shadow-run audit needs every run to be an independent draw of the generator, which
these libraries make hard: sdv samples from a *fixed* seed unless told otherwise (two releases
of one fitted synthesizer are identical), and training draws from NumPy's and torch's global
generators. The adapters seed both inside the call from ``random_state`` (restoring the
callers' generator states afterwards) and give sdv its sampling seed.
"""

import contextlib
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._sklearn_compat import Interval, _fit_context

__all__ = ["CTGANGenerator", "SDVGenerator", "SmartNoiseGenerator"]


def _require(module, extra):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"this recipe needs the optional package behind `{module}`: "
            f"pip install 'sklearn-mace[{extra}]'."
        ) from exc


@contextlib.contextmanager
def _global_generators(seed):
    """Seed NumPy's legacy global generator and torch's (when loaded), then restore them."""
    import sys

    # the wrapped libraries draw from the legacy global generator: it is what must be seeded
    state = np.random.get_state()  # noqa: NPY002
    np.random.seed(seed % 2**32)  # noqa: NPY002
    torch = sys.modules.get("torch")
    fork = torch.random.fork_rng(devices=[]) if torch is not None else contextlib.nullcontext()
    try:
        with fork:
            if torch is not None:
                torch.manual_seed(seed)
            yield
    finally:
        np.random.set_state(state)  # noqa: NPY002


def _frame(X, names):
    import pandas as pd

    return pd.DataFrame(X, columns=names)


def _columns(n_features):
    return [f"x{j}" for j in range(n_features)]


def _categorical(indices, n_features, name):
    indices = tuple(int(j) for j in indices)
    if any(not 0 <= j < n_features for j in indices):
        raise ValueError(f"{name} must be column indices 0..{n_features - 1}; got {indices!r}.")
    return indices


class _ThirdPartyGenerator(BaseEstimator):
    """Shared parts: validation, seeds, the release as a float array."""

    def _seeds(self):
        rng = check_random_state(self.random_state)
        return [int(s) for s in rng.randint(np.iinfo(np.int32).max, size=2)]

    def _release(self, frame):
        if isinstance(frame, dict):  # sdv 2 returns {table name: DataFrame}
            (frame,) = frame.values()
        released = frame[self._names].to_numpy(dtype=np.float64)
        if not np.isfinite(released).all():
            raise ValueError(f"{type(self).__name__} released NaN or infinite values.")
        return released

    def _check_n(self, n_samples):
        check_is_fitted(self)
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be an int >= 1; got {n_samples!r}.")
        return int(n_samples)


class SDVGenerator(_ThirdPartyGenerator):
    """An sdv single-table synthesizer as a recipe (``fit(X)``, ``sample(n)``).

    Columns are numerical for sdv except those listed in ``categorical_columns`` (values
    kept as they are). sdv samples from a fixed seed unless one is set, so without this
    adapter every release of one fitted synthesizer would be the same rows; here training
    and sampling are seeded from ``random_state`` (through sdv's ``_set_random_state``, a
    private method of sdv 1.x–2.x, and the global generators it trains with).

    Parameters
    ----------
    synthesizer : str, default="GaussianCopulaSynthesizer"
        A class of ``sdv.single_table``: ``"GaussianCopulaSynthesizer"``,
        ``"CTGANSynthesizer"``, ``"TVAESynthesizer"``, ``"CopulaGANSynthesizer"``.
    synthesizer_params : dict or None, default=None
        Keyword arguments of that class (e.g. ``{"epochs": 50}``).
    categorical_columns : tuple of int, default=()
        Columns sdv treats as categorical.
    random_state : int, RandomState instance or None, default=None
        Seeds training and sampling.

    Attributes
    ----------
    synthesizer_ : object
        The fitted sdv synthesizer.
    n_features_in_ : int
        Number of columns.

    See Also
    --------
    AlgorithmAudit : audits this recipe with shadow runs.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import SDVGenerator
    >>> generator = SDVGenerator(random_state=0)  # doctest: +SKIP
    >>> generator.fit(np.random.default_rng(0).normal(size=(100, 2))).sample(5).shape
    ... # doctest: +SKIP
    (5, 2)
    """

    _parameter_constraints: dict = {
        "synthesizer": [str],
        "synthesizer_params": [None, dict],
        "categorical_columns": [tuple, list],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        synthesizer="GaussianCopulaSynthesizer",
        *,
        synthesizer_params=None,
        categorical_columns=(),
        random_state=None,
    ):
        self.synthesizer = synthesizer
        self.synthesizer_params = synthesizer_params
        self.categorical_columns = categorical_columns
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train the sdv synthesizer on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training records (numeric).
        y : None
            Ignored.

        Returns
        -------
        self : SDVGenerator
            The fitted recipe.
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        single_table = _require("sdv.single_table", "sdv")
        from sdv.metadata import Metadata

        self._names = _columns(X.shape[1])
        categorical = _categorical(self.categorical_columns, X.shape[1], "categorical_columns")
        columns = {
            name: {"sdtype": "categorical" if j in categorical else "numerical"}
            for j, name in enumerate(self._names)
        }
        metadata = Metadata.load_from_dict({"tables": {"table": {"columns": columns}}})
        if not hasattr(single_table, self.synthesizer):
            raise ValueError(
                f"synthesizer={self.synthesizer!r} is not a class of sdv.single_table."
            )
        model = getattr(single_table, self.synthesizer)(metadata, **(self.synthesizer_params or {}))
        fit_seed, self._sample_seed = self._seeds()
        with _global_generators(fit_seed):
            model.fit({"table": _frame(X, self._names)})
        self.synthesizer_ = model
        return self

    def sample(self, n_samples):
        """Draw a release of ``n_samples`` rows.

        Parameters
        ----------
        n_samples : int >= 1
            Rows of the release.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            Synthetic records.
        """
        n_samples = self._check_n(n_samples)
        with _global_generators(self._sample_seed):
            self.synthesizer_._set_random_state(self._sample_seed)
            frame = self.synthesizer_.sample(num_rows=n_samples)
        return self._release(frame)


class CTGANGenerator(_ThirdPartyGenerator):
    """The ctgan package's CTGAN as a recipe (``fit(X)``, ``sample(n)``), on the CPU.

    Parameters
    ----------
    epochs : int >= 1, default=300
        Training epochs.
    batch_size : int >= 10, default=500
        Rows per batch (a multiple of ``pac``).
    pac : int >= 1, default=10
        PacGAN group size.
    discrete_columns : tuple of int, default=()
        Columns CTGAN treats as discrete.
    random_state : int, RandomState instance or None, default=None
        Seeds training (ctgan's ``set_random_state``) and sampling.

    Attributes
    ----------
    model_ : ctgan.CTGAN
        The fitted model.
    n_features_in_ : int
        Number of columns.

    See Also
    --------
    SDVGenerator : sdv's synthesizers, CTGAN among them.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import CTGANGenerator
    >>> generator = CTGANGenerator(epochs=1, batch_size=20, random_state=0)
    >>> generator.fit(np.random.default_rng(0).normal(size=(60, 2))).sample(5).shape
    ... # doctest: +SKIP
    (5, 2)
    """

    _parameter_constraints: dict = {
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 10, None, closed="left")],
        "pac": [Interval(Integral, 1, None, closed="left")],
        "discrete_columns": [tuple, list],
        "random_state": ["random_state"],
    }

    def __init__(
        self, *, epochs=300, batch_size=500, pac=10, discrete_columns=(), random_state=None
    ):
        self.epochs = epochs
        self.batch_size = batch_size
        self.pac = pac
        self.discrete_columns = discrete_columns
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train CTGAN on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training records (numeric).
        y : None
            Ignored.

        Returns
        -------
        self : CTGANGenerator
            The fitted recipe.
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        if self.batch_size % self.pac:
            raise ValueError(f"batch_size={self.batch_size} must be a multiple of pac={self.pac}.")
        ctgan = _require("ctgan", "ctgan")
        self._names = _columns(X.shape[1])
        discrete = _categorical(self.discrete_columns, X.shape[1], "discrete_columns")
        model = ctgan.CTGAN(
            epochs=self.epochs, batch_size=self.batch_size, pac=self.pac, enable_gpu=False
        )
        fit_seed, self._sample_seed = self._seeds()
        with _global_generators(fit_seed):
            model.set_random_state(fit_seed)
            model.fit(_frame(X, self._names), [self._names[j] for j in discrete])
        self.model_ = model
        return self

    def sample(self, n_samples):
        """Draw a release of ``n_samples`` rows.

        Parameters
        ----------
        n_samples : int >= 1
            Rows of the release.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            Synthetic records.
        """
        n_samples = self._check_n(n_samples)
        with _global_generators(self._sample_seed):
            self.model_.set_random_state(self._sample_seed)
            frame = self.model_.sample(n_samples)
        return self._release(frame)


class SmartNoiseGenerator(_ThirdPartyGenerator):
    """A smartnoise-synth DP synthesizer (MST, AIM, …) as a recipe.

    smartnoise draws its noise from OpenDP, whose generator cannot be seeded: the runs of
    an audit are independent draws (what the bound needs) but cannot be reproduced, and
    resuming an interrupted audit mixes runs of two sessions (still valid: every run is a
    draw of the same mechanism).

    Parameters
    ----------
    synthesizer : str, default="mst"
        Name for ``snsynth.Synthesizer.create`` (``"mst"``, ``"aim"``, ``"patectgan"``, …).
    epsilon : float > 0, default=1.0
        The synthesizer's privacy budget.
    preprocessor_eps : float >= 0, default=0.0
        Budget smartnoise spends on inferring column bounds; 0 with all columns categorical.
    categorical_columns : tuple of int or None, default=None
        Columns passed as categorical; None: all (MST and AIM need discrete data).
    random_state : int, RandomState instance or None, default=None
        Seeds what smartnoise draws from NumPy's global generator.

    Attributes
    ----------
    synthesizer_ : object
        The fitted smartnoise synthesizer.
    n_features_in_ : int
        Number of columns.

    See Also
    --------
    DPHistogramSynthesizer : a DP generator whose ε is exactly known.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import SmartNoiseGenerator
    >>> X = np.random.default_rng(0).integers(0, 3, size=(200, 3))
    >>> SmartNoiseGenerator(epsilon=1.0).fit(X).sample(5).shape  # doctest: +SKIP
    (5, 3)
    """

    _parameter_constraints: dict = {
        "synthesizer": [str],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "preprocessor_eps": [Interval(Real, 0, None, closed="left")],
        "categorical_columns": [None, tuple, list],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        synthesizer="mst",
        *,
        epsilon=1.0,
        preprocessor_eps=0.0,
        categorical_columns=None,
        random_state=None,
    ):
        self.synthesizer = synthesizer
        self.epsilon = epsilon
        self.preprocessor_eps = preprocessor_eps
        self.categorical_columns = categorical_columns
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train the smartnoise synthesizer on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training records (numeric codes for categorical columns).
        y : None
            Ignored.

        Returns
        -------
        self : SmartNoiseGenerator
            The fitted recipe.
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        snsynth = _require("snsynth", "smartnoise")
        self._names = _columns(X.shape[1])
        if self.categorical_columns is None:
            categorical = tuple(range(X.shape[1]))
        else:
            categorical = _categorical(self.categorical_columns, X.shape[1], "categorical_columns")
        model = snsynth.Synthesizer.create(self.synthesizer, epsilon=self.epsilon)
        fit_seed, self._sample_seed = self._seeds()
        frame = _frame(X, self._names)
        for j in categorical:
            frame[self._names[j]] = frame[self._names[j]].astype(int)
        with _global_generators(fit_seed):
            model.fit(
                frame,
                categorical_columns=[self._names[j] for j in categorical],
                preprocessor_eps=self.preprocessor_eps,
            )
        self.synthesizer_ = model
        return self

    def sample(self, n_samples):
        """Draw a release of ``n_samples`` rows.

        Parameters
        ----------
        n_samples : int >= 1
            Rows of the release.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            Synthetic records.
        """
        n_samples = self._check_n(n_samples)
        with _global_generators(self._sample_seed):
            frame = self.synthesizer_.sample(n_samples)
        return self._release(frame)
