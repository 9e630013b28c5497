"""RecordViews: the image and table views, their determinism, LiRA's per-view Gaussians."""

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.attacks import LiRAAttack, RecordViews
from tests._lira_planted import PlantedModel, planted_problem


def test_image_views_are_shifts_and_mirrors():
    image = np.arange(9.0).reshape(3, 3)
    record = np.r_[image.ravel(), 5.0][None]
    views = RecordViews("image", n_views=10, image_shape=(3, 3)).fit(record).transform(record)
    assert views.shape == (10, 1, 10) and (views[:, 0, -1] == 5.0).all()  # label kept
    pictures = views[:, 0, :-1].reshape(10, 3, 3)
    np.testing.assert_array_equal(pictures[0], image)
    right = np.c_[np.zeros(3), image[:, :2]]
    np.testing.assert_array_equal(pictures[1], right)  # shifted right, zero border
    np.testing.assert_array_equal(pictures[4], np.r_[image[1:], np.zeros((1, 3))])  # up
    np.testing.assert_array_equal(pictures[5], image[:, ::-1])  # the mirror image
    np.testing.assert_array_equal(pictures[6], np.c_[np.zeros(3), image[:, ::-1][:, :2]])
    no_flip = RecordViews("image", n_views=10, image_shape=(3, 3), flip=False).fit(record)
    assert no_flip.transform(record).shape[0] == no_flip.n_views_ == 5


def test_table_views_perturb_numeric_columns_the_same_way_in_any_batch():
    rng = np.random.default_rng(0)
    records = np.column_stack([rng.normal(size=50), rng.integers(0, 2, 50), rng.integers(0, 3, 50)])
    views = RecordViews(n_views=3, noise=0.1).fit(records)
    out = views.transform(records)
    assert out.shape == (3, 50, 3)
    np.testing.assert_array_equal(out[0], records)
    np.testing.assert_array_equal(out[1:, :, 1:], np.broadcast_to(records[:, 1:], (2, 50, 2)))
    noise = (out[1:, :, 0] - records[:, 0]) / records[:, 0].std()
    assert 0.05 < noise.std() < 0.2  # 0.1 standard deviations
    # a record's views depend on its values only, not on the rows around it
    np.testing.assert_array_equal(views.transform(records[::-1])[:, ::-1], out)
    np.testing.assert_array_equal(views.transform(records[7:8])[:, 0], out[:, 7])


def test_bad_views():
    records = np.ones((4, 5))
    with pytest.raises(ValueError, match="needs image_shape"):
        RecordViews("image").fit(records)
    with pytest.raises(ValueError, match="as many pixels as the 4 input columns"):
        RecordViews("image", image_shape=(3, 3)).fit(records)
    with pytest.raises(ValueError, match="must index the 4 input columns"):
        RecordViews(columns=[4]).fit(records)
    with pytest.raises(ValueError, match="expecting 5 features"):
        RecordViews().fit(records).transform(np.ones((2, 3)))


def test_lira_fits_one_gaussian_per_view():
    # view 1 moves every record to the next id; its Gaussians are the shadows' phi on that
    # view, split by the record's own membership; the attack averages the per-view scores
    records, member, target, _ = planted_problem(200, seed=3)

    class NextId(RecordViews):
        def transform(self, X):
            shifted = X.copy()
            shifted[:, 0] = (shifted[:, 0] + 1) % 200
            return np.stack([X, shifted])

    template = PlantedModel(target.difficulty)
    plain = LiRAAttack(target, template, n_reference_models=8, fix_variance=False, random_state=0)
    plain.fit(records, member)
    viewed = LiRAAttack(
        target, template, n_reference_models=8, views=NextId(), fix_variance=False, random_state=0
    )
    viewed.fit(records, member)
    trained = viewed.reference_models_.membership_.reshape(8, -1).astype(bool)
    phi = np.stack(
        [
            model.logit(np.roll(records, -1, axis=0))
            for model in viewed.reference_models_.estimators_
        ]
    )
    phi_t = target.logit(np.roll(records, -1, axis=0))
    second = []
    for i in range(len(records)):
        inside, outside = phi[trained[:, i], i], phi[~trained[:, i], i]
        second.append(
            norm.logpdf(phi_t[i], inside.mean(), inside.std(ddof=1))
            - norm.logpdf(phi_t[i], outside.mean(), outside.std(ddof=1))
        )
    expected = (plain.score_samples(records) + np.array(second)) / 2
    np.testing.assert_allclose(viewed.score_samples(records), expected, rtol=1e-9)


# scikit-learn's transformer checks assume one output row per input row on axis 0; the views
# are stacked on a new leading axis (n_views_, n_samples, n_features_in_), as LiRA and RMIA
# read them, so the checks that index or count axis 0 as the samples cannot express it.
VIEWS_AXIS = "transform stacks the views on axis 0: (n_views_, n_samples, n_features_in_)"


@parametrize_with_checks(
    [RecordViews(), RecordViews(n_views=1)],
    expected_failed_checks=lambda estimator: {
        check: VIEWS_AXIS
        for check in (
            "check_transformer_data_not_an_array",
            "check_transformer_general",
            "check_methods_sample_order_invariance",
            # with one view, axis 0 has length 1 and slicing it happens to agree
            *(("check_methods_subset_invariance",) if estimator.n_views > 1 else ()),
        )
    },
)
def test_estimator_checks(estimator, check):
    check(estimator)
