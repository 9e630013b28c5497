"""n_jobs and Dask: the shadow work gives the same results serially, in processes, on a cluster."""

import logging

import numpy as np
import pandas as pd
import pytest
import torch
from joblib import parallel_config
from sklearn.datasets import make_classification
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.linear_model import LogisticRegression

import sklearn_mace
from sklearn_mace.attacks import LiRAAttack, ShadowModels, compare_attacks


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=400, n_features=5, n_informative=3, flip_y=0.2, random_state=0
    )
    member = np.random.default_rng(0).random(len(y)) < 0.5
    return X, y, member


def _shadows(n_jobs):
    # random_state=None in the template: every shadow's seed comes from ShadowModels
    return ShadowModels(
        ExtraTreesClassifier(n_estimators=5),
        n_reference_models=4,
        split="balanced",
        n_jobs=n_jobs,
        random_state=0,
    )


def _assert_same_shadows(left, right, X):
    np.testing.assert_array_equal(left.queries_, right.queries_)
    np.testing.assert_array_equal(left.membership_, right.membership_)
    np.testing.assert_array_equal(left.sample_index_, right.sample_index_)
    for a, b in zip(left.estimators_, right.estimators_, strict=True):
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


@pytest.fixture(scope="module")
def serial(data):
    X, y, member = data
    records = np.column_stack([X, y])
    target = ExtraTreesClassifier(n_estimators=5, random_state=0).fit(X[member], y[member])
    shadows = _shadows(n_jobs=None).fit(X, y)
    lira = LiRAAttack(target, n_reference_models=4, random_state=0).fit(records, member)
    return shadows, lira, records


def test_shadow_models_do_not_depend_on_n_jobs(data, serial):
    X, y, _ = data
    _assert_same_shadows(serial[0], _shadows(n_jobs=2).fit(X, y), X)


class _TinyNet(torch.nn.Module):
    """Built by skorch inside fit, so its initial weights come from the seeded generator."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)
        )

    def forward(self, X):
        return self.layers(X)


def _skorch_shadows(X, y, n_jobs):
    skorch = pytest.importorskip("skorch")
    net = skorch.NeuralNetClassifier(
        _TinyNet,
        criterion=torch.nn.CrossEntropyLoss,
        max_epochs=2,
        train_split=None,
        verbose=0,
    )
    return ShadowModels(net, n_reference_models=2, n_jobs=n_jobs, random_state=0).fit(X, y)


def test_skorch_shadows_are_seeded_without_touching_the_callers_generator(data):
    # torch's generator is seeded per shadow inside fork_rng: reproducible nets, and the
    # caller's torch random stream goes on as if nothing had been drawn
    X, y, _ = data
    X = X.astype(np.float32)
    torch.manual_seed(123)
    first = _skorch_shadows(X, y, n_jobs=None)
    after = torch.rand(3)
    torch.manual_seed(123)
    np.testing.assert_array_equal(torch.rand(3), after)
    np.testing.assert_array_equal(_skorch_shadows(X, y, n_jobs=None).queries_, first.queries_)


@pytest.mark.slow
def test_skorch_shadows_do_not_depend_on_n_jobs(data):
    X, y, _ = data
    X = X.astype(np.float32)
    fits = [_skorch_shadows(X, y, n_jobs) for n_jobs in (1, 2)]
    np.testing.assert_array_equal(fits[0].queries_, fits[1].queries_)


def test_lira_does_not_depend_on_n_jobs(data, serial):
    _, _, member = data
    _, lira, records = serial
    parallel = LiRAAttack(lira.target, n_reference_models=4, n_jobs=2, random_state=0)
    parallel.fit(records, member)
    np.testing.assert_array_equal(parallel.score_samples(records), lira.score_samples(records))


def test_compare_attacks_does_not_depend_on_n_jobs(data, serial):
    X, y, member = data
    _, lira, records = serial
    attacks = {
        "LiRA": lira,
        "logistic on the records": LogisticRegression().fit(records, member),
        "precomputed": np.linspace(0, 1, len(member)),
    }
    tables = [compare_attacks(attacks, records, member, n_jobs=n) for n in (None, 2)]
    timing = ["fit_time", "score_time"]
    pd.testing.assert_frame_equal(tables[0].drop(columns=timing), tables[1].drop(columns=timing))


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def test_shadow_models_on_a_dask_cluster_equal_the_serial_run(data, serial, dask_client):
    X, y, member = data
    shadows, lira, records = serial
    with parallel_config(backend="dask"):
        on_dask = _shadows(n_jobs=None).fit(X, y)
        lira_on_dask = LiRAAttack(lira.target, n_reference_models=4, random_state=0).fit(
            records, member
        )
    _assert_same_shadows(shadows, on_dask, X)
    np.testing.assert_array_equal(lira_on_dask.score_samples(records), lira.score_samples(records))
    # two worker processes, running this checkout's code (not another installed copy)
    files = dask_client.run(lambda: __import__("sklearn_mace").__file__)
    assert len(files) == 2 and set(files.values()) == {sklearn_mace.__file__}
