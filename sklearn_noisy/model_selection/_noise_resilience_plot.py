"""The display of a noise-resilience curve: :class:`NoiseResilienceDisplay`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._noise_resilience_curve import NoiseResilienceCurveResult, noise_resilience_curve
from ._plot import axes_for
from ._report import metric_label

__all__ = ["NoiseResilienceDisplay"]


class NoiseResilienceDisplay:
    """Plot of the noise-resilience score NR (and a metric) against the noise level.

    NR (mean ± one SD over the repeats), the fraction of regions where its
    condition holds and, on a second axis, an expected metric with its SD.

    Parameters
    ----------
    result : NoiseResilienceCurveResult
        The curve to plot.
    metric : str or None, default=None
        Metric drawn on the second axis; default the first one of the result.
    name : str or None, default=None
        Legend label; default the estimator's class name.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the NR curve.
    fraction_line_ : matplotlib Line2D
        The fraction of regions where the condition holds.
    metric_ax_ : matplotlib Axes or None
        The second axis with the metric, if one is drawn.
    figure_ : matplotlib Figure
        Figure containing the plot.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_noisy.datasets import load_oxygen_sensor
    >>> from sklearn_noisy.model_selection import NoiseResilienceDisplay
    >>> sensor = load_oxygen_sensor()
    >>> display = NoiseResilienceDisplay.from_estimator(
    ...     LinearRegression(), sensor.data, sensor.target_true, [0.2, 1.0],
    ...     n_repeats=1, random_state=0, feature=1)
    >>> display.ax_.get_ylabel()
    'noise resilience NR'
    """

    def __init__(
        self,
        result: NoiseResilienceCurveResult,
        *,
        metric: str | None = None,
        name: str | None = None,
    ) -> None:
        self.result = result
        self.metric = metric
        self.name = name

    @classmethod
    def from_cv_results(
        cls,
        result: NoiseResilienceCurveResult,
        metric: str | None = None,
        *,
        name: str | None = None,
        ax: Any = None,
    ) -> NoiseResilienceDisplay:
        """Plot a :class:`NoiseResilienceCurveResult`.

        Parameters
        ----------
        result : NoiseResilienceCurveResult
            The output of :func:`noise_resilience_curve`.
        metric, name : str, default=None
            As in the constructor.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure by default.

        Returns
        -------
        display : NoiseResilienceDisplay
        """
        if not isinstance(result, NoiseResilienceCurveResult):
            raise TypeError(
                "result must be a NoiseResilienceCurveResult from "
                f"noise_resilience_curve; got {type(result).__name__}."
            )
        return cls(result, metric=metric, name=name).plot(ax=ax)

    @classmethod
    def from_results(
        cls,
        result: NoiseResilienceCurveResult,
        *,
        metric: str | None = None,
        name: str | None = None,
        ax: Any = None,
    ) -> NoiseResilienceDisplay:
        """Plot a curve: the first releases' name of :meth:`from_cv_results`."""
        return cls.from_cv_results(result, metric, name=name, ax=ax)

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: Any,
        y_ref: Any,
        noise_levels: Sequence[float],
        *,
        metric: str | None = None,
        name: str | None = None,
        ax: Any = None,
        **kwargs: Any,
    ) -> NoiseResilienceDisplay:
        """Run :func:`noise_resilience_curve` and plot it.

        Parameters
        ----------
        estimator, X, y_ref, noise_levels, **kwargs
            The arguments of :func:`noise_resilience_curve`.
        metric, name, ax : optional
            As in :meth:`from_cv_results`.

        Returns
        -------
        display : NoiseResilienceDisplay
        """
        result = noise_resilience_curve(estimator, X, y_ref, noise_levels, **kwargs)
        return cls.from_cv_results(result, metric, name=name, ax=ax)

    def plot(
        self, ax: Any = None, *, name: str | None = None
    ) -> NoiseResilienceDisplay:
        """Draw the display.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure by default.
        name : str, default=None
            Legend label, overriding the one given at construction.

        Returns
        -------
        display : NoiseResilienceDisplay
        """
        ax = axes_for(ax, "NoiseResilienceDisplay")
        result = self.result
        label = name or self.name or result.estimator_name or "estimator"
        levels = result.noise_levels
        mean, std = result.score_mean, result.score_std
        (line,) = ax.plot(
            levels, mean, marker="o", label=f"{label}: NR (band: ± 1 SD over repeats)"
        )
        ax.fill_between(
            levels, mean - std, mean + std, alpha=0.2, color=line.get_color()
        )
        (self.fraction_line_,) = ax.plot(
            levels,
            result.fraction_satisfied_mean,
            marker="v",
            linestyle=":",
            color=line.get_color(),
            label=f"{label}: fraction of regions where 2α·S1 + S2 ≥ 0",
        )
        for value, style, text in (
            (1.0, ":", "NR = 1: the prediction's error is free of the label noise"),
            (0.0, "--", "NR = 0: the prediction follows the noisy labels"),
        ):
            ax.axhline(value, color="0.4", linestyle=style, linewidth=1, label=text)
        ax.set_xlabel("label noise level σ")
        ax.set_ylabel("noise resilience NR")
        self.metric_ax_ = None
        metric = self.metric or next(iter(result.metrics), None)
        handles, labels = ax.get_legend_handles_labels()
        title = f"Noise resilience of {label}"
        if metric is not None:
            self.metric_ax_ = self._plot_metric(ax, metric)
            extra = self.metric_ax_.get_legend_handles_labels()
            handles, labels = handles + extra[0], labels + extra[1]
            title += f", and its {metric_label(metric)}"
        ax.set_title(title, fontsize="medium")
        ax.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.14),
            ncols=1,
            fontsize="small",
            frameon=False,
        )
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    def _plot_metric(self, ax: Any, metric: str) -> Any:
        """Draw ``metric`` on a twin axis of ``ax``; return that axis."""
        result = self.result
        if metric not in result.metrics:
            raise ValueError(
                f"metric {metric!r} is not in the result; available: "
                f"{sorted(result.metrics)}."
            )
        levels = result.noise_levels
        values = result.metrics[metric]
        twin = ax.twinx()
        twin.errorbar(
            levels,
            values["expected"].mean(axis=1),
            yerr=values["std"].mean(axis=1),
            color="C1",
            linestyle="--",
            marker="s",
            capsize=3,
            label=f"expected {metric_label(metric)} ± SD (label noise)",
        )
        twin.plot(
            levels,
            values["truth"].mean(axis=1),
            color="C2",
            linestyle=":",
            marker="^",
            label=f"{metric_label(metric)} against the noise-free targets",
        )
        twin.set_ylabel(metric_label(metric))
        return twin
