"""Constructor data and Pipelines (issue #25 item 4): the scale-mismatch warning and
``preprocessor=``.

The estimators that hold data from their constructor (the release, the reference rows) are
fitted on records a Pipeline may have transformed. The planted case: a ``StandardScaler``
before ``DOMIASAttack`` standardises the records but not the release and the reference rows,
and the attack's advantage falls from about 0.24 to about 0 — silently, before this warning.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace import ScaleMismatchWarning
from sklearn_mace.attacks import DOMIASAttack, ThresholdAttack
from sklearn_mace.datasets import make_planted_leak
from sklearn_mace.queries import (
    DOMIASQuery,
    GANLeaksQuery,
    LOGANQuery,
    MonteCarloQuery,
    NearestSyntheticDistance,
    SyntheticDensityQuery,
)
from sklearn_mace.queries._scale import MIN_ROWS, scale_mismatch
from tests._query_models import query_expected_failed_checks, synthetic_of_width, with_check_width

S, R = synthetic_of_width(3), synthetic_of_width(3, seed=2)


@pytest.fixture(scope="module")
def planted():
    return make_planted_leak(
        500, 500, 2000, 2000, n_features=4, leak_fraction=0.5, noise=0.3, random_state=0
    )


def _holders(synthetic, reference, **params):
    """Every estimator holding constructor data, with ``params`` (e.g. a preprocessor)."""
    return [
        DOMIASAttack(synthetic, reference, threshold="median", device="cpu", **params),
        DOMIASQuery(synthetic, reference, device="cpu", **params),
        SyntheticDensityQuery(synthetic, device="cpu", **params),
        NearestSyntheticDistance(synthetic, device="cpu", **params),
        MonteCarloQuery(synthetic, weighting="count", device="cpu", **params),
        GANLeaksQuery(synthetic, reference, device="cpu", **params),
        LOGANQuery(synthetic, reference, classifier=LogisticRegression(), **params),
    ]


def _scale_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, ScaleMismatchWarning)]


# ------------------------------------------------------------------ the planted scaler case


def test_scaler_before_domias_warns_and_names_the_columns(planted):
    X, m = planted.X_test, planted.membership
    plain = DOMIASAttack(planted.synthetic, planted.reference, threshold="median", device="cpu")
    assert not _scale_warnings(lambda: plain.fit(X, m))
    assert plain.score(X, m) > 0.2  # the leak is there: advantage 0.24 on these draws

    piped = make_pipeline(
        StandardScaler(),
        DOMIASAttack(planted.synthetic, planted.reference, threshold="median", device="cpu"),
    )
    caught = _scale_warnings(lambda: piped.fit(X, m))
    assert len(caught) == 1
    message = str(caught[0].message)
    # columns 0, 2 and 3 have means of 2.2, 1.2 and 2.1 standard deviations (column 1 is
    # centred already): standardising moves them, column 1 stays where it was.
    assert "column(s) 0, 2, 3 in synthetic" in message
    assert "column(s) 0, 2, 3 in reference" in message
    assert "preprocessor=" in message and "DOMIASAttack" in message
    assert abs(piped.score(X, m)) < 0.1  # what the warning is about: the leak is lost


def test_preprocessor_keeps_the_advantage_and_does_not_warn(planted):
    X, m = planted.X_test, planted.membership
    plain = DOMIASAttack(planted.synthetic, planted.reference, threshold="median", device="cpu")
    scaled = DOMIASAttack(
        planted.synthetic,
        planted.reference,
        threshold="median",
        device="cpu",
        preprocessor=StandardScaler(),
    )
    assert not _scale_warnings(lambda: scaled.fit(X, m))
    # A common affine map of the records and both densities' rows: the KDE's Scott bandwidth
    # follows the covariance, so the log-ratio is the same up to rounding and the median
    # cut guesses the same records.
    np.testing.assert_allclose(
        scaled.score_samples(X), plain.fit(X, m).score_samples(X), rtol=1e-6, atol=1e-6
    )
    assert scaled.score(X, m) == pytest.approx(plain.score(X, m))


def test_query_at_the_head_of_the_pipeline_is_the_other_idiom(planted):
    X, m = planted.X_test, planted.membership
    head = make_pipeline(
        DOMIASQuery(planted.synthetic, planted.reference, device="cpu"),
        StandardScaler(),
        ThresholdAttack(threshold="median"),
    )
    assert not _scale_warnings(lambda: head.fit(X, m))
    assert head.score(X, m) > 0.2


@pytest.mark.parametrize("index", range(7))
def test_every_holder_warns_behind_a_scaler_and_not_with_preprocessor(planted, index):
    X = planted.X_test
    raw = make_pipeline(StandardScaler(), _holders(planted.synthetic, planted.reference)[index])
    assert len(_scale_warnings(lambda: raw.fit(X, planted.membership))) == 1
    holder = _holders(planted.synthetic, planted.reference, preprocessor=StandardScaler())[index]
    assert not _scale_warnings(lambda: holder.fit(X, planted.membership))
    assert holder.preprocessor_ is not holder.preprocessor  # a fitted clone
    score = holder.score_samples(X) if hasattr(holder, "score_samples") else holder.transform(X)
    assert np.all(np.isfinite(score))  # the map itself: test_preprocessor_that_changes_the_width


def test_dataframe_columns_are_named(planted):
    names = ["age", "income", "weight", "height"]
    X = pd.DataFrame(StandardScaler().fit_transform(planted.X_test), columns=names)
    query = NearestSyntheticDistance(planted.synthetic, device="cpu")
    caught = _scale_warnings(lambda: query.fit(X))
    assert "column(s) age, weight, height in synthetic" in str(caught[0].message)


def test_preprocessor_that_changes_the_width(planted):
    # PCA to 2 components on the constructor rows: the records and the release both live in
    # the 2-D projection, and the check compares them there.
    query = NearestSyntheticDistance(planted.synthetic, device="cpu", preprocessor=PCA(2))
    assert not _scale_warnings(lambda: query.fit(planted.X_test))
    expected = PCA(2).fit(planted.synthetic)
    Z, G = expected.transform(planted.X_test), expected.transform(planted.synthetic)
    nearest = np.sqrt(((Z[:, None, :] - G[None]) ** 2).sum(-1).min(1))
    np.testing.assert_allclose(query.transform(planted.X_test)[:, 0], nearest, rtol=1e-9)


def test_bad_preprocessor_names_the_parameter():
    with pytest.raises(ValueError, match="'preprocessor' parameter"):
        NearestSyntheticDistance(S, preprocessor="scale").fit(S)


# ------------------------------------------------------------------ the rule: null and power

# One distribution for the records and the constructor rows: the rule must stay quiet,
# whatever the tails or the ties. 40 draws per case × 4 columns here (0 warnings expected;
# the rule's own false-alarm rate per column is below 1e-6 by its five-standard-error test,
# so a single warning is a failure); the slow version repeats each case 500 times.
NULL_DRAWS = {
    "normal": lambda rng, n: rng.normal(size=n),
    "student_t_1.5": lambda rng, n: rng.standard_t(1.5, n),
    "cauchy": lambda rng, n: rng.standard_cauchy(n),
    "lognormal_1.5": lambda rng, n: rng.lognormal(0.0, 1.5, n),
    "pareto_1.1": lambda rng, n: rng.pareto(1.1, n),
    "binary_0.03": lambda rng, n: rng.binomial(1, 0.03, n).astype(float),
    "binary_0.5": lambda rng, n: rng.binomial(1, 0.5, n).astype(float),
    "poisson_2": lambda rng, n: rng.poisson(2.0, n).astype(float),
}
SIZES = [(MIN_ROWS, MIN_ROWS), (50, 2000), (1000, 2000), (MIN_ROWS, 5000)]


def _null_warnings(draw, sizes, repeats, seed):
    rng = np.random.default_rng(seed)
    flagged = 0
    for _ in range(repeats):
        for n_x, n_c in sizes:
            X = np.column_stack([draw(rng, n_x) for _ in range(4)])
            C = np.column_stack([draw(rng, n_c) for _ in range(4)])
            location, spread = scale_mismatch(X, C)
            flagged += bool(location.size or spread.size)
    return flagged


@pytest.mark.parametrize("name", sorted(NULL_DRAWS))
def test_no_warning_on_one_distribution(name):
    assert _null_warnings(NULL_DRAWS[name], SIZES, repeats=40, seed=1) == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NULL_DRAWS))
def test_no_warning_on_one_distribution_slow(name):
    assert _null_warnings(NULL_DRAWS[name], SIZES, repeats=500, seed=2) == 0


def test_no_warning_on_a_leaky_release_of_heavy_tailed_records():
    # A release that copies half of its members with noise, on Student-t(1.5) columns: the
    # records (members and non-members) and the release share one scale.
    rng = np.random.default_rng(3)
    members, non_members = rng.standard_t(1.5, (300, 3)), rng.standard_t(1.5, (300, 3))
    copies = members[rng.integers(0, 300, 1000)] + 0.1 * rng.normal(size=(1000, 3))
    release = np.vstack([copies, rng.standard_t(1.5, (1000, 3))])
    reference = rng.standard_t(1.5, (2000, 3))
    query = GANLeaksQuery(release, reference, device="cpu")
    assert not _scale_warnings(lambda: query.fit(np.vstack([members, non_members])))


@pytest.mark.parametrize(
    ("transform", "kind"),
    [
        (lambda x: x + 1.5, "location"),  # a shift of 1.5 standard deviations
        (lambda x: 3.0 * x, "spread"),
        (lambda x: x / 3.0, "spread"),
        (lambda x: np.exp(x), "location"),  # a log column fed raw
    ],
    ids=["shift_1.5", "times_3", "divided_by_3", "exp"],
)
def test_rule_flags_shifted_or_rescaled_columns(transform, kind):
    rng = np.random.default_rng(4)
    X, C = rng.normal(size=(300, 3)), rng.normal(size=(2000, 3))
    X[:, 1] = transform(X[:, 1])
    location, spread = scale_mismatch(X, C)
    flagged = location if kind == "location" else spread
    np.testing.assert_array_equal(flagged, [1])


def test_too_few_rows_are_not_compared():
    rng = np.random.default_rng(5)
    X, C = rng.normal(size=(MIN_ROWS - 1, 2)) + 100, rng.normal(size=(500, 2))
    assert all(found.size == 0 for found in scale_mismatch(X, C))


# ------------------------------------------------------------------ estimator checks


@parametrize_with_checks(
    _holders(S, R, preprocessor=StandardScaler()),
    expected_failed_checks=query_expected_failed_checks,
)
def test_holders_with_a_preprocessor_pass_estimator_checks(estimator, check):
    # The constructor rows fix the record width: give them the width of the check's data.
    check(with_check_width(estimator, check))
