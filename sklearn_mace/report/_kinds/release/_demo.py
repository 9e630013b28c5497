"""The embedded default of ``sklearn-mace audit`` / ``make demo``: two releases of synthetic
breast-cancer records, one leaky and one safer, audited side by side.

* Data: scikit-learn's bundled breast-cancer table (569 patients, 30 measurements) plus the
  diagnosis as a text column (one-hot encoded by the audit) and a patient identifier (an
  identifier column, which the audit drops and reports).
* Members: 200 patients a generator is trained on; hold-out: 185 others; reference: the
  remaining 184, standing for the population data an attacker may hold.
* Leaky release: a Gaussian mixture with one tight component per two members (diagonal
  covariances, small regularization), the kind of overfit generator DOMIAS §5.1 audits; its
  samples sit next to the members.
* Safer release: a Gaussian mixture with 3 diagonal-covariance components fit on the same
  members; it reproduces the population shape, not the individuals. (Full covariances are
  not safe here: 3 × 496 covariance parameters from 200 members overfit, and DOMIAS finds
  them, AUC ≈ 0.69.)

Each release has 1000 rows. The input tables are written as CSV under ``<out>/inputs`` so
that the same audit can be rerun from files with the printed command; they go through the
report's staging (``report/_output.py``) with the report: listed in the folder's manifest,
moved into place at the end, and a user's file of the same name is never overwritten. The
command line (``_cli.py``, the common path of ``sklearn_mace/cli.py``) stages, writes the
report and prints; this module makes the data and audits it. NumPy, pandas and scikit-learn
load inside the functions: the command line imports the names below at its start.
"""

N_MEMBERS, N_NON_MEMBERS, N_SYNTHETIC = 200, 185, 1000
INPUT_NAMES = ("members", "non_members", "reference", "synthetic_leaky", "synthetic_safe")
#: The folders and the fixed file names the demo writes under ``out`` (checked before work).
DEMO_FOLDERS = ("figures", "inputs")
DEMO_FILES = tuple(f"inputs/{name}.csv" for name in INPUT_NAMES)


def _sample(mixture, scaler, n, columns, random_state):
    import pandas as pd

    mixture.set_params(random_state=random_state)
    Z, _ = mixture.sample(n)
    frame = pd.DataFrame(scaler.inverse_transform(Z), columns=columns)
    return frame


def make_demo_tables(random_state=0):
    """Members, hold-out, reference and the two synthetic releases as DataFrames."""
    import numpy as np
    from sklearn.datasets import load_breast_cancer
    from sklearn.mixture import GaussianMixture
    from sklearn.preprocessing import StandardScaler

    data = load_breast_cancer(as_frame=True)
    features = data.data
    rng = np.random.default_rng(random_state)
    order = rng.permutation(len(features))
    table = features.copy()
    table.insert(0, "patient_id", [f"P{i:04d}" for i in range(len(table))])
    table["diagnosis"] = np.where(data.target == 1, "benign", "malignant")
    members = table.iloc[order[:N_MEMBERS]].reset_index(drop=True)
    non_members = table.iloc[order[N_MEMBERS : N_MEMBERS + N_NON_MEMBERS]].reset_index(drop=True)
    reference = table.iloc[order[N_MEMBERS + N_NON_MEMBERS :]].reset_index(drop=True)

    # generators see the measurements and the diagnosis (as 0/1), never the identifier
    columns = [*features.columns, "malignant"]
    train = members[features.columns].assign(malignant=(members["diagnosis"] == "malignant"))
    scaler = StandardScaler().fit(train.astype(float))
    Z = scaler.transform(train.astype(float))
    leaky = GaussianMixture(
        N_MEMBERS // 2, covariance_type="diag", reg_covar=1e-3, random_state=random_state
    ).fit(Z)
    safe = GaussianMixture(
        3, covariance_type="diag", reg_covar=1e-3, random_state=random_state
    ).fit(Z)
    releases = {}
    for name, model in (("leaky", leaky), ("safe", safe)):
        frame = _sample(model, scaler, N_SYNTHETIC, columns, random_state)
        frame.insert(0, "patient_id", [f"S{i:04d}" for i in range(len(frame))])
        frame["diagnosis"] = np.where(frame.pop("malignant") > 0.5, "malignant", "benign")
        releases[name] = frame[table.columns]
    return members, non_members, reference, releases


def write_demo_inputs(folder, random_state=0):
    """Write the demo's tables as CSV under ``folder``; returns them as DataFrames."""
    from ..._output import write_csv

    members, non_members, reference, releases = make_demo_tables(random_state)
    folder.mkdir(parents=True, exist_ok=True)
    frames = (members, non_members, reference, *releases.values())
    tables = dict(zip(INPUT_NAMES, frames, strict=True))
    for name, frame in tables.items():
        write_csv(frame, folder / f"{name}.csv")
    return members, non_members, reference, releases


def audit_demo(stage, random_state=0, verbose=True, device="auto"):
    """Write the demo's tables under ``stage/inputs`` and audit the two releases.

    ``stage`` is the staging folder of the report (the common path of the command line
    writes the report beside the inputs, moves both into place and prints the summary);
    ``device`` is :func:`audit_release`'s.

    Returns
    -------
    result : AuditResult
    """
    from ._audit import audit_release

    members, non_members, reference, releases = write_demo_inputs(stage / "inputs", random_state)
    return audit_release(
        members,
        non_members,
        releases,
        reference,
        group_by="diagnosis",
        random_state=random_state,
        verbose=verbose,
        on_error="report",  # the command line's: a partial report
        device=device,
    )
