"""What the model report adds to the common one: format, accuracies, loss histograms."""

import html

import numpy as np

from ..._figures import Figures, common_figures, figure, figure_file
from ..._format import fmt
from ..._html import (
    Cards,
    Claims,
    Comparisons,
    Estimates,
    Exposed,
    Failed,
    HowToRead,
    Notes,
    common_reading,
)
from ..._present import Presentation
from ..._sample_size import SampleSize
from ..._section import Section

__all__ = ["Accuracies", "ModelCards", "presentation"]

#: the records.csv columns shown beside each exposed record (models with a loss)
EXPOSED_COLUMNS = ("loss", "true_label_confidence")


def loss_figure(result, subject):
    """The per-record loss of members and non-members, on a log scale."""
    m = result.membership
    is_member = m == 1
    fig, ax = figure()
    loss = np.log10(np.maximum(subject.record_columns["loss"], 1e-12))
    bins = np.linspace(loss.min(), loss.max() + 1e-9, 40)
    ax.hist(loss[is_member], bins=bins, alpha=0.6, label=f"members ({int(is_member.sum())})")
    ax.hist(
        loss[~is_member], bins=bins, alpha=0.6, label=f"non-members ({int((~is_member).sum())})"
    )
    ax.set_xlabel("log10 of the per-record loss −log M_y(x)")
    ax.set_ylabel("records")
    ax.legend()
    ax.set_title(f"'{subject.name}': loss of members and non-members")
    return fig


class ModelCards(Cards):
    """The common card, with the model's format and accuracies after its name."""

    def facts(self, report, subject):
        """The model's format, its train and test accuracy, and where its classes came from."""
        f = subject.facts
        source = f.get("classes_from")
        return (
            f" · {html.escape(str(f['format']))} · train accuracy {fmt(f['train_accuracy'])}, "
            f"test {fmt(f['test_accuracy'])}"
            + (f" · classes from {html.escape(str(source))}" if source else "")
        )


class Accuracies(Section):
    """Printed: each model's format and accuracies (the page has them on the cards)."""

    def lines(self, report):
        """One line per model."""
        return [
            f"'{s.name}' ({s.facts['format']}): train accuracy {fmt(s.facts['train_accuracy'])}, "
            f"test {fmt(s.facts['test_accuracy'])}"
            for s in report.result.subjects
        ]


def model_reading(report):
    """The model attacks."""
    return [
        "<li><b>BTTA</b> uses only whether the model is right (Bentley et al. Alg. 1); "
        "<b>CBTTA</b> the same inside categories (labels, confidence bins). <b>MACE</b> "
        "queries the per-record loss −log M_y(x). The <b>shadow-model attack</b>, "
        "<b>LiRA</b> and <b>RMIA</b> read one set of reference models that imitate the "
        "training on halves of the targets and population rows; no membership label "
        "trains them.</li>",
        "<li><b>MACE best-ε threshold</b>: the same held-out scores as MACE's Bayes rule, "
        "with the threshold that gives the largest ε on a random half of the targets, "
        'certified on the other half. "Best" is on the half that chooses: certified on half '
        "as many targets, it often certifies less than the Bayes rule, whose rule is fixed "
        "in advance and certified on every target; it can win when a low-FPR operating "
        "point refutes a larger ε.</li>",
    ]


LABEL_ONLY_READING = (
    "<li>The <b>label-only attack</b> (Choquette-Choo et al. 2021) reads only the predicted "
    "labels: a record scores 1 when the model labels it right, plus the share of noisy copies "
    "of it still labelled right — training records lie farther from the decision "
    "boundary.</li>"
)


def label_only_reading(report):
    """The label-only attack."""
    return [LABEL_ONLY_READING]


def _labels_only(result):
    """The models audited from their labels alone (no loss)."""
    return {s.name for s in result.subjects if "loss" not in s.record_columns}


def loss_figures(report):
    """The loss histogram of each model that has a loss."""
    result = report.result
    labels_only = _labels_only(result)
    caption = (
        "Distribution of the per-record loss of model '{name}' (log scale)."
        if labels_only
        else "Distribution of the per-record loss of model '{name}' (log scale; losses "
        "below 1e-12 are drawn at 1e-12). The further apart the two histograms, the "
        "more the loss tells about membership."
    )
    return {
        figure_file("loss", result, s): (loss_figure(result, s), caption.format(name=s.name))
        for s in result.subjects
        if s.name not in labels_only
    }


def presentation(result):
    """The model report: the common sections with the model's card, loss histograms and
    accuracies; with label-only models, their predicted label is shown instead of a loss
    when every model gives labels only, and the label-only attack is explained."""
    labels_only = _labels_only(result)
    every = bool(labels_only) and len(labels_only) == len(result.subjects)
    readings = (common_reading, model_reading) + ((label_only_reading,) if labels_only else ())
    return Presentation(
        noun="model",
        title="sklearn-mace model privacy audit",
        command="sklearn-mace audit-model",
        exposed_columns=("predicted_label", "correct") if every else EXPOSED_COLUMNS,
        subtitle=(
            f" · label column {html.escape(result.inputs.label)} · "
            f"{len(result.inputs.feature_names)} input columns"
        ),
        sections=(
            ModelCards(),
            Failed(),
            Claims(),
            Estimates(),
            Comparisons(),
            SampleSize(),
            Figures((common_figures, loss_figures)),
            Exposed(),
            HowToRead(readings),
            Accuracies(),
            Notes(),
        ),
    )
