"""``make_categorical_population``: the algorithm audit's demo population and its targets."""

import numpy as np
import pytest

from sklearn_mace.datasets import make_categorical_population


@pytest.mark.parametrize("categories", [(4, 3, 5), (2, 2), (6,)])
def test_the_targets_are_the_modal_record_and_a_canary_outside_the_support(categories):
    data = make_categorical_population(500, categories=categories, random_state=3)
    assert data.data.shape == (500, len(categories))
    assert np.all((data.data >= 0) & (data.data < np.array(categories)))
    rows, counts = np.unique(data.data, axis=0, return_counts=True)
    common, canary = data.targets
    np.testing.assert_array_equal(common, rows[counts.argmax()])
    assert not (data.data == canary).all(axis=1).any()  # the empty cell holds no record
    assert data.target_names == ["most common record", "empty-cell canary"]
    assert data.categories == categories and data.train_size == 500 // 3


def test_the_seed_fixes_the_population():
    first, again = (
        make_categorical_population(random_state=1),
        make_categorical_population(random_state=1),
    )
    np.testing.assert_array_equal(first.data, again.data)
    assert not np.array_equal(first.data, make_categorical_population(random_state=2).data)


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="categories must list"):
        make_categorical_population(categories=(1,))
    with pytest.raises(ValueError, match="n_samples"):
        make_categorical_population(0)
