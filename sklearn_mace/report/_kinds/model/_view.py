"""What the model report adds to the common one: format, accuracies, loss histograms."""

import html

import numpy as np

from ..._figures import figure, figure_file
from ..._format import fmt
from ..._present import Presentation

__all__ = ["ModelPresentation"]


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


class ModelPresentation(Presentation):
    """The model audit's additions to the common report."""

    noun = "model"
    title = "sklearn-mace model privacy audit"
    command = "sklearn-mace audit-model"
    exposed_columns = ("loss", "true_label_confidence")

    def facts_line(self, result, subject):
        """The model's format, its train and test accuracy, and where its classes came from."""
        f = subject.facts
        source = f.get("classes_from")
        return (
            f" · {html.escape(str(f['format']))} · train accuracy {fmt(f['train_accuracy'])}, "
            f"test {fmt(f['test_accuracy'])}"
            + (f" · classes from {html.escape(str(source))}" if source else "")
        )

    def subtitle(self, result):
        """The label column and the number of input columns."""
        return (
            f" · label column {html.escape(result.inputs.label)} · "
            f"{len(result.inputs.feature_names)} input columns"
        )

    def how_to_read(self, result):
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

    def figures(self, result):
        """The loss histogram of each model."""
        return {
            figure_file("loss", result, s): (
                loss_figure(result, s),
                f"Distribution of the per-record loss of model '{s.name}' (log scale; losses "
                "below 1e-12 are drawn at 1e-12). The further apart the two histograms, the "
                "more the loss tells about membership.",
            )
            for s in result.subjects
        }

    def summary_lines(self, result):
        """Each model's format and accuracies."""
        return [
            f"'{s.name}' ({s.facts['format']}): train accuracy {fmt(s.facts['train_accuracy'])}, "
            f"test {fmt(s.facts['test_accuracy'])}"
            for s in result.subjects
        ]


LABEL_ONLY_READING = (
    "<li>The <b>label-only attack</b> (Choquette-Choo et al. 2021) reads only the predicted "
    "labels: a record scores 1 when the model labels it right, plus the share of noisy copies "
    "of it still labelled right — training records lie farther from the decision "
    "boundary.</li>"
)


def presentation(result):
    """The model report's presentation; with label-only models, one that draws no loss
    histogram for them and exposes their predicted label instead of a loss."""
    results = result.subjects
    labels_only = {r.name for r in results if "loss" not in r.record_columns}
    if not labels_only:
        return ModelPresentation()

    class LabelOnlyPresentation(ModelPresentation):
        exposed_columns = (
            ("predicted_label", "correct")
            if len(labels_only) == len(results)
            else ModelPresentation.exposed_columns
        )

        def figures(self, result):
            return {
                figure_file("loss", result, s): (
                    loss_figure(result, s),
                    f"Distribution of the per-record loss of model '{s.name}' (log scale).",
                )
                for s in result.subjects
                if s.name not in labels_only
            }

        def how_to_read(self, result):
            return [*super().how_to_read(result), LABEL_ONLY_READING]

    return LabelOnlyPresentation()
