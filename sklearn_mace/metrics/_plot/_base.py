"""Helpers shared by the displays; matplotlib is imported only when something is drawn."""


def _get_ax(ax):
    """Return ``ax`` and its figure, creating both when ``ax`` is None."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    return ax, ax.figure
