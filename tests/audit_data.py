"""Small tables with a planted leak, shared by the CLI and browser tests."""

import numpy as np
import pandas as pd


def population(n, rng):
    """n records: three Gaussian measurements, a 3-valued site and a unique identifier."""
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=["age", "bmi", "glucose"])
    frame["site"] = rng.choice(["north", "south", "east"], size=n)
    frame.insert(0, "record_id", [f"R{rng.integers(1e9)}" for _ in range(n)])
    return frame


def audit_tables(seed=0, n_members=40, n_non_members=60):
    """Members, non-members, and two releases: noisy copies of the members (leaky) and fresh
    population draws (safe, no information about the members by construction)."""
    rng = np.random.default_rng(seed)
    members, non_members = population(n_members, rng), population(n_non_members, rng)
    copies = pd.concat([members, members], ignore_index=True)
    noise = 0.05 * rng.normal(size=(len(copies), 3))
    leaky = copies.assign(
        **{c: copies[c] + noise[:, i] for i, c in enumerate(["age", "bmi", "glucose"])}
    )
    safe = population(2 * n_members, rng)
    return members, non_members, {"leaky": leaky, "safe": safe}


EDUCATION = {  # Adult's education and its exact function education-num
    "HS-grad": 9,
    "Some-college": 10,
    "Bachelors": 13,
    "Masters": 14,
    "Assoc-voc": 11,
    "11th": 7,
    "Doctorate": 16,
    "Preschool": 1,
}


def adult_like(n, rng):
    """n records shaped like Adult: an exactly derived column (education-num of education),
    '?' shared by workclass and occupation, rare categories, a 41-valued native-country,
    a mostly-zero capital-gain and a string income label."""
    p_edu = np.array([0.32, 0.22, 0.17, 0.06, 0.05, 0.04, 0.013, 0.002])
    education = rng.choice(list(EDUCATION), size=n, p=p_edu / p_edu.sum())
    unknown = rng.random(n) < 0.06
    workclass = np.where(
        unknown,
        "?",
        rng.choice(["Private", "Self-emp", "Gov", "Without-pay"], n, p=[0.7, 0.15, 0.1497, 0.0003]),
    )
    occupation = np.where(
        unknown,
        "?",
        rng.choice(["Craft", "Sales", "Exec", "Armed-Forces"], n, p=[0.4, 0.3, 0.2997, 0.0003]),
    )
    countries = ["United-States", "Mexico"] + [f"Country-{i}" for i in range(39)]
    p_country = np.r_[0.9, 0.02, np.full(39, 0.08 / 39)]
    gain = np.where(rng.random(n) < 0.92, 0, rng.integers(1000, 99999, size=n))
    return pd.DataFrame(
        {
            "age": rng.integers(17, 90, size=n),
            "workclass": workclass,
            "education": education,
            "education-num": [EDUCATION[e] for e in education],
            "occupation": occupation,
            "sex": rng.choice(["Male", "Female"], size=n),
            "capital-gain": gain,
            "hours-per-week": rng.normal(40, 12, size=n).round(),
            "native-country": rng.choice(countries, size=n, p=p_country),
            "income": rng.choice(["<=50K", ">50K"], size=n, p=[0.76, 0.24]),
        }
    )
