"""``sklearn-mace audit-model --delta`` on the DP-SGD ground truth: nothing above its ε.

A small MLP trained on digits with DP-SGD (opacus, ``tests/_dpsgd.py``) is (ε, δ)-DP for its
members, ε from the accountant at δ = 1e-5, for the add/remove-one relation. Exported to ONNX
(raw logits, as a torch export is), it is audited from the command line exactly as a user
would: every certified ε of the card — stated at the same δ — must stay at or below the
accountant's ε. (The audit refutes substitute-one DP, which the add/remove-one guarantee
implies at 2ε, so even the weaker check "≤ 2ε" would be sound; the stricter one is asked.)
"""

import contextlib
import io
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.cli import main

pytest.importorskip("opacus")
pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

from tests._dpsgd import digits_membership_split, train_dpsgd_mlp  # noqa: E402

DELTA = 1e-5


def _export(module, path):
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated, still exact
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            (torch.zeros(1, 64),),
            str(path),
            dynamo=False,
            input_names=["pixels"],
            output_names=["logits"],
            dynamic_axes={"pixels": {0: "n"}, "logits": {0: "n"}},
        )
    return path


def _table(records, path):
    frame = pd.DataFrame(records[:, :-1], columns=[f"pixel_{j}" for j in range(64)])
    frame.assign(digit=records[:, -1].astype(int)).to_csv(path, index=False)
    return path


@pytest.mark.slow  # DP-SGD training and the audit of 800 records: about a minute on 2 cores
def test_audit_model_with_delta_certifies_nothing_above_the_accountant(tmp_path):
    members, non_members = digits_membership_split(400, 400, random_state=0)
    model = train_dpsgd_mlp(members, epsilon=1.0, delta=DELTA, random_state=0)
    assert 0.8 < model.epsilon <= 1.0 and model.train_accuracy > 0.3  # it did learn
    argv = [
        "audit-model",
        "--model",
        f"dpsgd={_export(model.module, tmp_path / 'dpsgd.onnx')}",
        "--members",
        str(_table(members, tmp_path / "members.csv")),
        "--non-members",
        str(_table(non_members, tmp_path / "non_members.csv")),
        "--label",
        "digit",
        "--delta",
        str(DELTA),
        "--claimed-epsilon",
        str(2 * model.epsilon),  # add/remove-one ε implies substitute-one 2ε
        "--quiet",
        "--out",
        str(tmp_path / "out"),
    ]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(argv) == 0
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert (summary["delta"] == DELTA).all() and (summary["status"] == "ok").all()
    certified = summary["epsilon_lower_bound"].to_numpy()
    assert np.all(certified <= model.epsilon), (certified, model.epsilon)
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert '<div class="card leak">' not in page
    assert "substitute-one" in page and "add/remove-one" in page
