"""The embedded default of ``sklearn-mace audit-model``: an overfit and a regularised
classifier on scikit-learn's bundled digits, saved to ONNX and skops and audited side by side.

* Data: ``load_digits`` (1797 images of 8 × 8 pixels, 10 classes), shuffled with the seed.
  Members: 400 images that train both models; hold-out: 400 others; population: the other
  997, which train the shadow models.
* ``overfit``: a random forest of 50 fully grown trees — every member is a leaf of every
  tree that saw it, so it is fitted almost perfectly. Saved to ONNX with skl2onnx and audited
  through onnxruntime; its training recipe (the unfitted forest) is saved to skops for the
  shadow models, since an ONNX file carries no training procedure.
* ``regularised``: a strongly L2-penalised logistic regression (``C=0.005``), whose losses on
  members and hold-out rows are close. Saved and audited as skops; being a scikit-learn
  model, it is its own shadow recipe.

Everything is written under ``out``: ``models/`` and ``inputs/`` (the tables as CSV) and the
report, so the printed command reruns the same audit from files. All go through the report's
staging (``report/_output.py``): written into a staging folder, moved into ``out`` at the end,
listed in the folder's manifest; a user's file of the same name is never overwritten. The
command line (``_cli.py``, the common path of ``sklearn_mace/cli.py``) stages, writes the
report and prints; this module makes the data and the models and audits them. NumPy and
scikit-learn load inside the functions: the command line imports the names below at its start.
"""

from pathlib import Path

N_MEMBERS, N_NON_MEMBERS = 400, 400
LABEL = "digit"
INPUT_NAMES = ("members", "non_members", "population")
MODEL_FILES = ("overfit.onnx", "regularised.skops", "overfit-recipe.skops")
#: The folders and the fixed file names the demo writes under ``out`` (checked before work).
DEMO_FOLDERS = ("figures", "inputs", "models")
DEMO_FILES = (
    *(f"inputs/{name}.csv" for name in INPUT_NAMES),
    *(f"models/{name}" for name in MODEL_FILES),
)


def make_model_demo_tables(random_state=0, sizes=(N_MEMBERS, N_NON_MEMBERS, None)):
    """Members, hold-out and population tables of the digits (64 pixels + ``digit``).

    ``sizes``: rows of each table; the population (None) takes all remaining rows.
    """
    import numpy as np
    from sklearn.datasets import load_digits

    table = load_digits(as_frame=True).frame.rename(columns={"target": LABEL})
    order = np.random.default_rng(random_state).permutation(len(table))
    n_mem, n_non, n_pop = sizes
    stop = len(table) if n_pop is None else n_mem + n_non + n_pop
    cuts = [order[:n_mem], order[n_mem : n_mem + n_non], order[n_mem + n_non : stop]]
    return [table.iloc[rows].reset_index(drop=True) for rows in cuts]


def demo_recipes(random_state=0):
    """The two unfitted training recipes (pipelines) of the demo."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    overfit = RandomForestClassifier(50, random_state=random_state)
    regularised = make_pipeline(StandardScaler(), LogisticRegression(C=0.005, max_iter=2000))
    return overfit, regularised


def save_demo_models(members, folder, random_state=0):
    """Train both models on ``members`` and save them; returns the CLI's model arguments."""
    import numpy as np
    import skops.io as sio
    from skl2onnx import to_onnx
    from sklearn.base import clone

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    X = members.drop(columns=LABEL).to_numpy(dtype=np.float32)
    y = members[LABEL].to_numpy()
    overfit, regularised = demo_recipes(random_state)
    names = ("overfit", "regularised", "recipe")
    files = {name: folder / file for name, file in zip(names, MODEL_FILES, strict=True)}
    sio.dump(clone(overfit), files["recipe"])
    overfit.fit(X, y)
    onnx = to_onnx(overfit, X[:1], options={"zipmap": False})
    files["overfit"].write_bytes(onnx.SerializeToString())
    regularised.fit(X, y)
    sio.dump(regularised, files["regularised"])
    return files


def check_demo_packages():
    """The demo saves ONNX and skops files: an ``AuditInputError`` without skl2onnx or skops."""
    from ... import AuditInputError
    from ._io import MODELS_EXTRA

    try:
        import skl2onnx  # noqa: F401
        import skops  # noqa: F401
    except ImportError as exc:
        raise AuditInputError(
            f"The model demo saves ONNX and skops files: {MODELS_EXTRA}."
        ) from exc


def audit_demo(
    stage,
    n_jobs=None,
    random_state=0,
    verbose=True,
    sizes=(N_MEMBERS, N_NON_MEMBERS, None),
    device="auto",
):
    """Write the tables and models under ``stage``, load the models back and audit them.

    ``stage`` is the staging folder of the report (the common path of the command line
    writes the report beside them, moves everything into place and prints the summary);
    ``n_jobs`` and ``device`` are :func:`audit_model`'s.
    ``sizes`` (members, hold-out, population rows) exists so that the tests can run a smaller
    copy of the demo; the command line always uses the default.

    Returns
    -------
    result : AuditResult
        The models' ``path`` is relative to the report's folder (``models/overfit.onnx``).
    """
    from ... import audit_model, load_model
    from ..._output import write_csv
    from ._io import load_estimator

    members, non_members, population = make_model_demo_tables(random_state, sizes)
    (stage / "inputs").mkdir(parents=True, exist_ok=True)
    for name, frame in zip(INPUT_NAMES, (members, non_members, population), strict=True):
        write_csv(frame, stage / "inputs" / f"{name}.csv")
    files = save_demo_models(members, stage / "models", random_state)
    models = {name: load_model(files[name], name=name) for name in ("overfit", "regularised")}
    recipes = {"overfit": load_estimator(files["recipe"])}
    result = audit_model(
        models,
        members,
        non_members,
        label=LABEL,
        population=population,
        shadow_estimators=recipes,
        n_jobs=n_jobs,
        random_state=random_state,
        verbose=verbose,
        on_error="report",  # the command line's: a partial report
        device=device,
    )
    for subject in result.subjects:  # the staging folder goes away: the path in the report
        subject.facts["path"] = Path(subject.facts["path"]).relative_to(stage).as_posix()
    return result
