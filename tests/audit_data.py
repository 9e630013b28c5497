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
