"""Whole cards on data whose truth is known: no leak, so no red card, in at most α of the cards.

A card *makes a claim* when any certified number it prints says "leak": an ε lower bound
above 0, or an advantage lower bound above the trivial ``|2p − 1|``, in any row of its
table, its headline, or any point of its figures (the release-size figure's three points).
The engine states every one of them at ``1 − α/K`` (Bonferroni over the card's ``K``
certified numbers), so under the null a card claims something with probability at most
``α = 5 %``.

* Releases independent of membership: every release is drawn from the population, never
  from the members (Gaussian, skewed log-normal, heavy-tailed Pareto with no mean, and
  three-valued discrete columns that make verbatim copies of members and non-members alike).
* Models that never saw the targets: trained on population rows only, so members and
  non-members are exchangeable (a 10-class logistic regression without shadow models; a
  random forest and, at prior 0.25 with three non-members per member, a logistic regression,
  both on the digits' parity with a population table for the shadow-model attack and LiRA —
  two classes, so that no shadow model misses a class).

A card is red when it makes a claim, or when members appear verbatim in a release more often
than non-members (an exact test at α/K, which adds at most α/K): the counts below are of red
cards.

The slow suite runs at least 200 cards per audit across at least three settings; the default
suite runs a reduced version. A failure bound: more claiming cards than the binomial 0.999
quantile of Bin(n, α), exceeded with probability at most 0.001 when the claims are valid.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_mace.report import audit_model, audit_release
from tests.audit_data import audit_tables

ALPHA = 0.05


def max_claims(n_cards, miss=1e-3):
    """Largest number of claiming cards consistent with a rate <= α (binomial tail)."""
    return int(binom.ppf(1 - miss, n_cards, ALPHA))


# ----------------------------------------------------------------------------- releases
def _release_tables(seed, kind):
    """Members, non-members and a release drawn from one population, independently."""
    if kind == "gaussian":
        members, non_members, releases = audit_tables(seed=seed)
        return members, non_members, releases["safe"]
    family, d = kind.split("-")
    rng = np.random.default_rng(seed)
    draw = {
        "lognormal": lambda n: rng.lognormal(0.0, 1.5, size=(n, int(d))),
        "pareto": lambda n: rng.pareto(1.0, size=(n, int(d))) + 1.0,
        "discrete": lambda n: rng.integers(0, 3, size=(n, int(d))).astype(float),
    }[family]

    def population(n):
        frame = pd.DataFrame(draw(n), columns=[f"x{j}" for j in range(int(d))])
        return frame.assign(site=rng.choice(["north", "south", "east"], size=n))

    return population(60), population(90), population(120)


def release_card_claims(kind, seeds):
    """For each seed: did the card of a release that leaks nothing claim anything?"""
    flags = []
    for seed in seeds:
        members, non_members, release = _release_tables(seed, kind)
        result = audit_release(
            members,
            non_members,
            {"independent": release},
            disclosure=False,  # estimates, not claims
            random_state=seed,
            verbose=False,
        )
        (card,) = result.subjects
        assert not result.partial and card.n_claims == 9  # six rows and three figure points
        red = result.verdict(card) == "leak"
        assert red >= card.certified_leak  # every certified leak is red
        flags.append(red)
        if not red:
            assert not result.records["exposed"].any()
    return np.array(flags)


RELEASE_SETTINGS = ["gaussian", "lognormal-8", "pareto-20", "discrete-2"]


@pytest.mark.parametrize("kind", ["gaussian", "discrete-2"])
def test_null_release_cards_rarely_claim(kind):
    flags = release_card_claims(kind, range(2))
    assert flags.sum() <= max_claims(2), flags  # a smoke check; the slow test has the power


@pytest.mark.slow
@pytest.mark.parametrize("kind", RELEASE_SETTINGS)
def test_null_release_cards_claim_in_at_most_alpha(kind):
    flags = release_card_claims(kind, range(1000, 1060))  # 4 × 60 = 240 cards
    assert flags.sum() <= max_claims(60), flags.mean()


# ----------------------------------------------------------------------------- models
def _digits_split(seed, n_members, n_non_members, n_population, parity=False):
    frame = load_digits(as_frame=True).frame.rename(columns={"target": "digit"})
    if parity:
        frame["digit"] = frame["digit"] % 2
    order = np.random.default_rng(seed).permutation(len(frame))
    cuts = np.cumsum([n_members, n_non_members, n_population])
    return [frame.iloc[rows].reset_index(drop=True) for rows in np.split(order, cuts)]


def _model_card(seed, kind):
    """One audit of a model trained on population rows only (never on the targets)."""
    sizes = {"logistic": (60, 60, 300), "forest": (60, 60, 300), "prior-0.25": (40, 120, 300)}
    parity = kind != "logistic"
    members, non_members, trained_on, shadows = _digits_split(seed, *sizes[kind], parity=parity)
    if kind == "forest":
        model = RandomForestClassifier(10, random_state=seed)
    else:
        model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=300))
    model.fit(trained_on.drop(columns="digit").to_numpy(), trained_on["digit"].to_numpy())
    population = None if kind == "logistic" else shadows.iloc[:300]
    result = audit_model(
        {"null": model},
        members,
        non_members,
        label="digit",
        population=population,
        random_state=seed,
        verbose=False,
    )
    (card,) = result.subjects
    assert not result.partial, result.failures
    assert card.n_claims == (4 if population is None else 7)
    red = result.verdict(card) == "leak"
    assert red >= card.certified_leak  # every certified leak is red
    if not red:
        assert not result.records["exposed"].any()
    return red


def model_card_claims(kind, seeds):
    """For each seed: did the card of a model that never saw the targets claim anything?"""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # tiny models: BLAS threads only add spin-wait time
        return np.array([_model_card(seed, kind) for seed in seeds])


MODEL_SETTINGS = ["logistic", "forest", "prior-0.25"]


@pytest.mark.parametrize("kind", ["logistic", "prior-0.25"])
def test_null_model_cards_rarely_claim(kind):
    flags = model_card_claims(kind, range(2))
    assert flags.sum() <= max_claims(2), flags  # a smoke check; the slow test has the power


@pytest.mark.slow
@pytest.mark.parametrize("kind", MODEL_SETTINGS)
def test_null_model_cards_claim_in_at_most_alpha(kind):
    flags = model_card_claims(kind, range(1000, 1070))  # 3 × 70 = 210 cards
    assert flags.sum() <= max_claims(70), flags.mean()


# ----------------------------------------------------------------------------- power
@pytest.mark.slow
def test_leaky_releases_always_claim():
    # members copied with 5 % noise, so nearest-synthetic distances separate members from
    # non-members almost perfectly (the default suite checks seed 0 in test_cli.py)
    for seed in range(100, 110):
        members, non_members, releases = audit_tables(seed=seed)
        result = audit_release(
            members,
            non_members,
            {"leaky": releases["leaky"]},
            random_state=seed,
            disclosure=False,
            verbose=False,
        )
        (card,) = result.subjects
        assert card.certified_leak and result.verdict(card) == "leak"
        assert card.epsilon_lower_bound > 0.5
