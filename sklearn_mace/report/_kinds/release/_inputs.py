"""The synthetic-data audit's inputs: checks, encoding, the reference split, copies, disclosure.

Everything here runs before (or beside) the engine: errors in the inputs
(:class:`~sklearn_mace.report.AuditInputError`) are raised before anything is computed.

* DOMIAS and GAN-leaks CAL need reference rows from the population. When none are given,
  half of the hold-out rows (chosen at random) become the reference and the other half stay
  targets, as in the DOMIAS set-up where the reference set and the test non-members are
  disjoint draws from the population.
* **Exact copies** are the targets that appear verbatim in a release: some synthetic row
  equals them on every audited column (raw values; numbers compared as numbers, so ``39``
  and ``39.0`` are equal; a missing value equals a missing value). **Near copies** have their
  nearest synthetic row within ``NEAR_COPY_DISTANCE`` = 0.1 in the encoded space (numeric
  columns in standard deviations, a differing category counts 1), exact copies included.
  Members and non-members are counted apart: copies of non-members happen by chance.
"""

import hashlib
import os
import stat
import warnings
from numbers import Integral
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from ..._encode import encode_tables
from ..._engine import Targets
from ..._io import AuditInputError, AuditInputWarning, read_table
from ..._quality import check_overlapping_records, row_keys, table_notes
from ._types import PreparedRelease

__all__ = ["ReleaseFile", "copy_counts", "prepare_release_inputs", "row_keys", "table_fingerprint"]

MIN_TARGETS = 10  # per class: fewer leaves 5-fold cross-validation folds without a class
NEAR_COPY_DISTANCE = 0.1  # encoded space: standard deviations; a differing category is 1
FINGERPRINT_ROWS = 1 << 16  # rows hashed at a time by table_fingerprint (8 bytes a row)
MAX_DISCLOSURE_RECORDS = 500  # targets, and controls, attacked (anonymeter's default n_attacks)
EXACT_NAME = "Exact copy (verbatim in the release)"
COPY_FACTS = (
    "member_targets",
    "nonmember_targets",
    "member_exact_copies",
    "nonmember_exact_copies",
    "member_near_copies",
    "nonmember_near_copies",
)


def check_sizes(name, n_rows, minimum):
    """An input error when a table has fewer than ``minimum`` rows."""
    if n_rows < minimum:
        raise AuditInputError(
            f"Too few rows for the audit: the {name} table has {n_rows} row(s); it needs at "
            f"least {minimum}."
        )


def group_labels(group_by, members, non_members, max_categories):
    """The ``group_by`` value of every member and non-member, as text."""
    for name, frame in (("members", members), ("non-members", non_members)):
        if group_by not in frame.columns:
            raise AuditInputError(
                f"The {name} table has no column {group_by!r} to group by; it has "
                f"{list(frame.columns)}."
            )
    labels = pd.concat([members[group_by], non_members[group_by]], ignore_index=True)
    labels = labels.astype("string").fillna("<missing>").to_numpy(dtype=object)
    if len(set(labels)) > max_categories:
        raise AuditInputError(
            f"group_by={group_by!r} has {len(set(labels))} distinct values; pick a column "
            f"with at most {max_categories} (a category, not an identifier or a measurement)."
        )
    return labels


def _split_reference(X_non, seed, notes, n_members):
    """Half the hold-out rows (at random) as the reference; the other half stay targets."""
    check_sizes("non-members", len(X_non), 2 * MIN_TARGETS)
    perm = check_random_state(seed).permutation(len(X_non))
    ref_idx, row_non = np.sort(perm[: len(perm) // 2]), np.sort(perm[len(perm) // 2 :])
    kept, whole = n_members / (n_members + len(row_non)), n_members / (n_members + len(perm))
    notes.append(
        f"No reference rows were given: {len(ref_idx)} of the {len(perm)} hold-out rows "
        "(chosen at random) serve as the population reference for DOMIAS and GAN-leaks "
        f"CAL; the other {len(row_non)} are the non-member targets. So the members' share "
        f"of the targets (the prior, unless one is given) is {n_members} of "
        f"{n_members + len(row_non)} = {kept:.3f}, not the {whole:.3f} of every hold-out row "
        "a target, and its trivial advantage |2p − 1| grows accordingly; give reference "
        "rows to keep every hold-out row a target."
    )
    return X_non[ref_idx], row_non


def _check_release_sizes(arrays, synthetic, n_features, n_targets):
    check_sizes("members", n_targets[0], MIN_TARGETS)
    check_sizes("non-member target", n_targets[1], MIN_TARGETS)
    # KDEs with a full-covariance bandwidth need more rows than features
    check_sizes("reference", len(arrays["reference"]), max(MIN_TARGETS, n_features + 1))
    for key in synthetic:
        n = len(arrays[f"synthetic '{key}'"])
        check_sizes(f"synthetic '{key}'", n, max(MIN_TARGETS, n_features + 1))


def _encoded(tables, options):
    """:func:`encode_tables` with the audit's options (:class:`ReleaseOptions`);
    ``(arrays, names, column report)``."""
    return encode_tables(
        tables,
        options.columns,
        max_categories=options.max_categories,
        id_columns=options.id_columns,
        allow_unparsed=options.allow_unparsed or (),
        max_columns=options.max_columns,
        verbose=options.verbose,
    )


def _checked_tables(tables, options):
    """The data-quality gate (:mod:`._quality`): encode, refuse (or drop) the records among
    both members and non-members — compared on the kept columns, so row ids do not hide
    them — and gather the notes on every table. ``(tables, encoded, notes, keys)``: the
    :func:`row_keys` of the tables on the kept columns."""
    encoded = _encoded(tables, options)
    kept = encoded[2].loc[encoded[2]["features"] > 0, "column"].tolist()
    checked = check_overlapping_records(
        tables,
        kept,
        drop=options.drop_overlapping_records,
    )
    if checked is not tables:  # records left out: the encoding is fitted without them
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AuditInputWarning)  # said on the first pass
            encoded = _encoded(checked, options)
    column_report = encoded[2]
    kept = column_report.loc[column_report["features"] > 0, "column"].tolist()
    keys = row_keys(checked, kept)  # once: the duplicate notes and the exact copies
    notes = [note for found in column_report.attrs["table_notes"].values() for note in found]
    notes += table_notes(checked, column_report["column"].tolist(), compared=kept, keys=keys)
    return checked, encoded, notes, keys


def prepare_release_inputs(members, non_members, synthetic, reference, *, options, seed):
    """Encode the tables, split off the reference, build the targets (input errors here).

    ``options``: a :class:`ReleaseOptions` (``columns``, ``prior``, ``max_categories``,
    ``group_by``, ``id_columns``, ``allow_unparsed``, ``max_columns``, ``verbose`` of
    :func:`encode_tables`, ``drop_overlapping_records`` of
    :func:`check_overlapping_records`). Returns a :class:`PreparedRelease`: ``tables``
    (raw), ``targets`` (:class:`Targets`), ``X_targets``, ``X_reference``, ``target_keys``,
    ``synthetic`` (name -> encoded rows), ``synthetic_keys``, ``unparsed`` (name ->
    columns accepted as mostly not numbers), ``feature_names``, ``column_report``, ``kept``
    (audited raw columns), ``notes`` (the data-quality notes first).
    """
    tables = {"members": members, "non-members": non_members}
    tables.update({f"synthetic '{k}'": v for k, v in synthetic.items()})
    if reference is not None:
        tables["reference"] = reference
    max_categories = options.max_categories
    tables, (arrays, feature_names, column_report), notes, keys = _checked_tables(tables, options)
    members, non_members = tables["members"], tables["non-members"]
    group_by = options.group_by
    groups = (
        None if group_by is None else group_labels(group_by, members, non_members, max_categories)
    )
    X_mem, X_non = arrays["members"], arrays["non-members"]
    row_non = np.arange(len(X_non))
    if reference is None:
        arrays["reference"], row_non = _split_reference(X_non, seed, notes, len(X_mem))
    _check_release_sizes(arrays, synthetic, len(feature_names), (len(X_mem), len(row_non)))
    # exact copies: raw rows compared on the columns the encoding keeps (not identifiers)
    kept = column_report.loc[column_report["features"] > 0, "column"].tolist()
    m = np.r_[np.ones(len(X_mem), dtype=int), np.zeros(len(row_non), dtype=int)]
    prior = float(m.mean()) if options.prior is None else float(options.prior)
    targets = Targets(
        membership=m,
        source=np.r_[np.full(len(X_mem), "members"), np.full(len(row_non), "non-members")].astype(
            object
        ),
        row=np.r_[np.arange(len(X_mem)), row_non],
        prior=prior,
        group=None
        if groups is None
        else groups[np.r_[np.arange(len(X_mem)), len(X_mem) + row_non]],
        group_by=group_by,
    )
    return PreparedRelease(
        tables=tables,
        targets=targets,
        X_targets=np.vstack([X_mem, X_non[row_non]]),
        X_reference=arrays["reference"],
        target_keys=np.r_[keys["members"], keys["non-members"][row_non]],
        synthetic={k: arrays[f"synthetic '{k}'"] for k in synthetic},
        synthetic_keys={k: _sorted(keys[f"synthetic '{k}'"]) for k in synthetic},
        unparsed={  # columns accepted as mostly not numbers, per release (allow_unparsed)
            k: column_report.attrs["accepted_unparsed"].get(f"synthetic '{k}'", [])
            for k in synthetic
        },
        feature_names=feature_names,
        column_report=column_report,
        kept=kept,
        notes=notes,
    )


def _sorted(keys):
    """A release's row keys sorted in place (no copy): looked up by binary search
    (:func:`~sklearn_mace.report._quality.in_sorted`), never in row order."""
    keys.sort()
    return keys


def copy_counts(m, exact, distance):
    """The release's copy counts (``COPY_FACTS``); NaN for a count whose input failed."""
    m = np.asarray(m)
    facts = dict.fromkeys(COPY_FACTS, np.nan)
    facts.update(member_targets=int(m.sum()), nonmember_targets=int(len(m) - m.sum()))
    if exact is not None:
        exact = np.asarray(exact, dtype=bool)
        facts.update(
            member_exact_copies=int(exact[m == 1].sum()),
            nonmember_exact_copies=int(exact[m == 0].sum()),
        )
    if distance is not None:
        near = np.asarray(distance) <= NEAR_COPY_DISTANCE
        facts.update(
            member_near_copies=int(near[m == 1].sum()),
            nonmember_near_copies=int(near[m == 0].sum()),
        )
    return facts


def holdout_copy_notes(subjects):
    """A warning for each release that copies more hold-out rows than members verbatim.

    The claims stay valid — such a release does tell members from non-members, a leak about
    the hold-out rows — but it usually means the release was generated from the hold-out
    rows, or that they overlap the training rows: the inputs deserve a look.
    """
    notes = []
    for subject in subjects:
        members = subject.facts.get("member_exact_copies", np.nan)
        others = subject.facts.get("nonmember_exact_copies", np.nan)
        if np.isnan([members, others]).any() or others <= members:
            continue
        notes.append(
            f"Release '{subject.name}' holds {int(others)} hold-out (non-member) rows "
            f"verbatim but only {int(members)} members: was it generated from the hold-out "
            "rows, or do they overlap the training rows? Its claims then measure how the "
            "release exposes the hold-out rows."
        )
    return notes


def _disclosure_pools(tables, kept, rng, notes):
    """The members and the control records attacked, on the columns with a distance."""
    members = tables["members"]
    gaps = [
        c
        for c in kept
        if pd.api.types.is_numeric_dtype(members[c])
        and any(frame[c].isna().any() for frame in tables.values())
    ]
    columns = [c for c in kept if c not in gaps]
    if gaps:
        notes.append(
            "Attribute inference and linkability leave out the numeric column(s) "
            f"{gaps} (missing values have no distance)."
        )
    if len(columns) < 2:
        return columns, None, None
    # controls: records no release can have seen. Not the reference rows: a release may be
    # built from them (as filler), and would then know the controls as well as the members
    pools = (members[columns], tables["non-members"][columns])
    targets, control = (
        pool.sample(n=min(len(pool), MAX_DISCLOSURE_RECORDS), random_state=rng) for pool in pools
    )
    if len(targets) + len(control) < sum(len(pool) for pool in pools):
        notes.append(
            f"Attribute inference and linkability attack {len(targets)} members and "
            f"{len(control)} control records drawn at random (at most "
            f"{MAX_DISCLOSURE_RECORDS} each)."
        )
    return columns, targets, control


def run_disclosure(tables, synthetic, kept, *, confidence, seed, notes):
    """Attribute inference and linkability on the raw audited columns: ``(table, error)``.

    The control records are the non-members: population records the generator never saw
    (never the reference rows, which a release may hold: a
    :class:`~sklearn_mace.disclosure.ControlCopyWarning` says when a release holds more
    controls verbatim than chance explains). At most ``MAX_DISCLOSURE_RECORDS`` targets and as many
    controls are attacked, drawn at random (anonymeter's ``n_attacks``). Numeric columns with
    missing values have no distance in the mixed metric and are left out (named in a note).
    These are estimates with exact intervals, corrected over the rows of a release (their own
    family, Bonferroni as the card's claims), not part of the certified claims.
    """
    from ....disclosure import disclosure_summary

    rng = check_random_state(seed)
    columns, targets, control = _disclosure_pools(tables, kept, rng, notes)
    if targets is None:
        return None, "fewer than two usable columns (one is the secret, others are known)"
    try:
        table = disclosure_summary(
            targets,
            control,
            {key: frame[columns] for key, frame in synthetic.items()},
            confidence=confidence,
            random_state=rng,
        )
    except ValueError as exc:
        return None, str(exc)
    return table.rename(columns={"release": "subject"}), None  # keyed like every CSV


def check_max_categories(max_categories):
    """``max_categories`` must be an int >= 1."""
    if (
        isinstance(max_categories, bool)
        or not isinstance(max_categories, Integral)
        or max_categories < 1
    ):
        raise ValueError(f"max_categories must be an int >= 1; got {max_categories!r}.")


def table_fingerprint(frame, block=FINGERPRINT_ROWS):
    """A digest of a table's shape, column names, types and every cell (pandas' row hashes,
    ``block`` rows at a time): equal for the same file read twice the same way."""
    digest = hashlib.blake2b(digest_size=16)
    header = (frame.shape, [str(c) for c in frame.columns], [str(t) for t in frame.dtypes])
    digest.update(repr(header).encode())
    for start in range(0, len(frame), block):
        rows = pd.util.hash_pandas_object(frame.iloc[start : start + block], index=False)
        digest.update(rows.to_numpy().tobytes())
    return digest.hexdigest()


def _file_identity(path):
    """``(size, modification time in ns)`` of a regular file; None for anything else (a
    pipe or a device cannot be read twice) or a file that cannot be reached."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_size, found.st_mtime_ns) if stat.S_ISREG(found.st_mode) else None


class ReleaseFile:
    """A release the CLI read from a file, read again for the disclosure risks (issue #28:
    the raw release, 458 MiB at 10 million rows × 6 columns, is then not held through the
    analyses). Made by :meth:`before_reading`, before the first read; :meth:`remember`
    takes the fingerprint of the table the audit used, :meth:`read` is the same
    :func:`read_table` call again and refuses a file that changed in between."""

    def __init__(self, path, option, identity, read_options):
        self.path, self.option, self.identity = Path(path), option, identity
        self.read_options, self.fingerprint = dict(read_options), None

    @classmethod
    def before_reading(cls, path, option, **read_options):
        """The file's identity now, or None when it is not a regular file (then the audit
        holds the table); ``read_options`` are :func:`read_table`'s keywords."""
        identity = _file_identity(path)
        return None if identity is None else cls(path, option, identity, read_options)

    def remember(self, frame):
        """Keep the fingerprint of ``frame``, the table read (:func:`table_fingerprint`)."""
        self.fingerprint = table_fingerprint(frame)

    def read(self):
        """The table again: an :class:`AuditInputError` naming the file when its size or
        modification time differ from those before the first read, or its table from the
        one remembered (the disclosure risks must describe the table the analyses used)."""
        if _file_identity(self.path) != self.identity:
            self._refuse("its size or modification time differ, or it is gone")
        frame = read_table(self.path, **self.read_options)
        if table_fingerprint(frame) != self.fingerprint:
            self._refuse("it holds another table")
        return frame

    def _refuse(self, how):
        role = self.read_options.get("role", "synthetic")
        raise AuditInputError(
            f"The {role} file '{self.path}' ({self.option}) changed during the audit ({how}): "
            "the disclosure risks read it again after the analyses (so as not to hold it "
            "through them) and would describe another table than the analyses used. Leave "
            "the file unchanged until the audit ends and run it again, or pass disclosure=False."
        )
