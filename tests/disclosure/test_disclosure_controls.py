"""Disclosure controls are records the release cannot have seen (issue #22, item 8).

Ground truth: a release of 500 Adult members verbatim plus 4 500 reference rows discloses
every one of its 500 members. Its attribute-inference and linkability risks, measured against
the non-members (records it never saw), must be positive with intervals that exclude 0; with
the reference rows among the controls (what the audit did before) the controls look exposed
too and a warning says so.
"""

import importlib.util
import os
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.disclosure import (
    AttributeInferenceRisk,
    ControlCopyWarning,
    LinkabilityRisk,
    disclosure_summary,
)

_MGLEARN = importlib.util.find_spec("mglearn")  # its data only: importing it needs imageio
ADULT = (
    os.path.join(_MGLEARN.submodule_search_locations[0], "data", "adult.data") if _MGLEARN else ""
)
COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]


@pytest.fixture(scope="module")
def half_copy():
    """500 members, 500 non-members, 4 500 reference rows; the release copies the members
    verbatim and fills up with the reference rows."""
    if not os.path.exists(ADULT):
        pytest.skip("mglearn's adult.data is not installed")
    adult = pd.read_csv(ADULT, header=None, names=COLUMNS, skipinitialspace=True)
    adult = adult.drop_duplicates().sample(frac=1.0, random_state=0).reset_index(drop=True)
    members, non_members, reference = adult[:500], adult[500:1000], adult[1000:5500]
    release = pd.concat([members, reference], ignore_index=True)
    return members, non_members, reference, release


def test_half_copy_release_reads_positive_risks_against_the_non_members(half_copy):
    members, non_members, _, release = half_copy
    secrets = ["age", "occupation", "sex", "income"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ControlCopyWarning)  # the non-members were never seen
        summary = disclosure_summary(members, non_members, release, secrets=secrets, random_state=0)
    assert (summary["n_control"] == 500).all()
    # every member is in the release: each guess is its own row's value, every link found
    # within its own row (measured: attribute risks 1.0 with lower bounds >= 0.94,
    # linkability 0.23 [0.18, 0.28]); a positive lower bound is the claim under test
    assert (summary["risk"] > 0).all()
    assert (summary["risk_low"] > 0).all(), summary[["target", "risk", "risk_low"]]


def test_reference_rows_as_controls_get_a_warning(half_copy):
    members, non_members, reference, release = half_copy
    # what the audit did before: the non-members and the reference rows as controls
    controls = pd.concat([non_members, reference], ignore_index=True)
    linking = LinkabilityRisk(random_state=0).fit(release)
    with pytest.warns(ControlCopyWarning, match=r"holds 4500 of the 5000 control records"):
        hidden = linking.evaluate(members, controls)
    # and the leak is hidden: the linkability interval covers 0 (measured -0.014, 0.121)
    assert hidden["risk_low"].iloc[0] < 0 < hidden["risk_high"].iloc[0]
    inference = AttributeInferenceRisk(secrets=["occupation"], random_state=0).fit(release)
    some = pd.concat([non_members, reference[:500]], ignore_index=True)
    with pytest.warns(ControlCopyWarning, match=r"holds 500 of the 1000 control records"):
        inference.evaluate(members, some)


def test_chance_copies_of_a_small_discrete_domain_do_not_warn():
    """Three binary columns: about every control equals some release row by chance."""
    rng = np.random.default_rng(0)

    def table(n):
        return pd.DataFrame({c: rng.choice(["a", "b"], n) for c in ("x", "y", "z")})

    members, controls, release = table(300), table(300), table(1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ControlCopyWarning)
        result = AttributeInferenceRisk(random_state=0).fit(release).evaluate(members, controls)
    assert len(result) == 3


def test_share_in_is_the_same_whatever_the_hash_block():
    # issue #28: the release is hashed in blocks of rows, never as one table-sized copy
    from sklearn_mace.disclosure._controls import _share_in

    rng = np.random.default_rng(0)
    table = [rng.integers(0, 5, 1000).astype(float), rng.integers(0, 3, 1000)]
    rows = [
        np.r_[table[0][:50], rng.integers(0, 5, 50) + 0.5],
        np.r_[table[1][:50], rng.integers(0, 3, 50)],
    ]
    shares = {block: _share_in(rows, table, block=block) for block in (7, 256, 10**6)}
    assert shares[7] == shares[256] == shares[10**6] == 0.5  # the 50 copies, no other row
