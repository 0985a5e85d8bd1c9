"""Inline SVG figures, drawn at build time with real axes (ticks, grid, labels): ROC
curve, reliability diagram, sorted bars with CIs, ProbeScores with CIs, layer sweeps,
the causal test's dose-response curve.

Every figure is a plain ``<svg>`` string with a ``viewBox``, so the stylesheet can
scale it to a phone's width; every text that comes from data is escaped here, because
the templates insert the figures as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np


def _num(v: float) -> str:
    """A coordinate to 0.1 px, written short: no trailing ``.0``, no ``-0``.

    >>> _num(54.0), _num(12.46), _num(-0.02), _num(-3.25)
    ('54', '12.5', '0', '-3.2')
    """
    text = f"{v:.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text


def _tick_label(v: float, step: float) -> str:
    decimals = 0 if step >= 1 else 1 if step >= 0.1 - 1e-9 else 2
    return f"{v:.{decimals}f}"


@dataclass(frozen=True)
class Frame:
    """A plot area inside a ``width`` x ``height`` figure and the data ranges it shows."""

    width: int
    height: int
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    left: int = 54
    right: int = 16
    top: int = 30
    bottom: int = 46

    def x(self, v: float) -> float:
        lo, hi = self.x_range
        return self.left + (v - lo) / (hi - lo) * (self.width - self.left - self.right)

    def y(self, v: float) -> float:
        lo, hi = self.y_range
        return self.height - self.bottom - (v - lo) / (hi - lo) * (
            self.height - self.top - self.bottom)

    def xy(self, x: float, y: float) -> str:
        return f"{_num(self.x(x))},{_num(self.y(y))}"

    def axes(self, x_ticks: Sequence[float], y_ticks: Sequence[float], x_label: str,
             y_label: str, *, x_step: float = 0.2, y_step: float = 0.2,
             y_axis: bool = True) -> str:
        """Grid, axis lines, tick marks and labels, and both axis titles. The grid is one
        ``<path>``, the axis lines with their tick marks another (a subpath per line:
        drawn as the separate lines were), the tick labels a group per axis."""
        x0, x1 = self.left, self.width - self.right
        y0, y1 = self.height - self.bottom, self.top
        grid, axis, y_text, x_text = [], [], [], []
        for t in y_ticks:
            y = _num(self.y(t))
            grid.append(f"M{x0},{y}H{x1}")
            axis.append(f"M{x0 - 4},{y}H{x0}")
            y_text.append(f'<text x="{x0 - 7}" y="{_num(self.y(t) + 3.5)}">'
                          f"{_tick_label(t, y_step)}</text>")
        for t in x_ticks:
            x = _num(self.x(t))
            grid.append(f"M{x},{y1}V{y0}")
            axis.append(f"M{x},{y0}V{y0 + 4}")
            x_text.append(f'<text x="{x}" y="{y0 + 16}">{_tick_label(t, x_step)}</text>')
        axis.append(f"M{x0},{y0}H{x1}")
        if y_axis:
            axis.append(f"M{x0},{y1}V{y0}")
        mid_y = _num((y0 + y1) / 2)
        parts = []
        if grid:
            parts.append(f'<path d="{"".join(grid)}" class="grid"/>')
        parts.append(f'<path d="{"".join(axis)}" class="axis"/>')
        if y_text:
            parts.append(f'<g class="ytick">{"".join(y_text)}</g>')
        if x_text:
            parts.append(f'<g class="xtick">{"".join(x_text)}</g>')
        parts.append(f'<text x="{_num((x0 + x1) / 2)}" y="{self.height - 8}" class="label">'
                     f"{escape(x_label)}</text>")
        if y_axis:
            parts.append(f'<text x="14" y="{mid_y}" class="label" '
                         f'transform="rotate(-90 14 {mid_y})">{escape(y_label)}</text>')
        return "".join(parts)


def _svg(width: int, height: int, title: str, body: str, css: str = "chart") -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{css}" viewBox="0 0 {width} '
            f'{height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{escape(title)}"><title>{escape(title)}</title>{body}</svg>')


def _ticks(lo: float, hi: float, step: float) -> list[float]:
    return [round(float(t), 6) for t in np.arange(lo, hi + step / 2, step)]


def _legend(frame: Frame, items: Sequence[tuple[str, str]], *, x: float, y: float) -> str:
    """Line samples with their names: (css class of the line, text)."""
    parts = []
    for k, (css, text) in enumerate(items):
        yy = y + 15 * k
        parts.append(f'<line x1="{_num(x)}" y1="{_num(yy - 4)}" x2="{_num(x + 18)}" '
                     f'y2="{_num(yy - 4)}" class="{css}"/>'
                     f'<text x="{_num(x + 23)}" y="{_num(yy)}" class="legend-text">'
                     f"{escape(text)}</text>")
    return "".join(parts)


SQUARE = (380, 340)
UNIT_TICKS = _ticks(0.0, 1.0, 0.2)


def roc_points(labels: Sequence[int], probs: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """(false-positive rates, true-positive rates) of the ROC curve from (0, 0), one
    point per distinct score, collinear points dropped: the points of scikit-learn's
    ``roc_curve`` (numpy only: a leaderboard build need not import scikit-learn).

    >>> [a.tolist() for a in roc_points([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])]
    [[0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0]]
    """
    y = np.asarray(labels, dtype=np.float64)
    s = np.asarray(probs, dtype=np.float64)
    order = np.argsort(s, kind="mergesort")[::-1]
    y, s = y[order], s[order]
    # the last index of each run of equal scores: one threshold each
    ends = np.r_[np.nonzero(np.diff(s))[0], y.size - 1]
    tps = np.cumsum(y)[ends]
    fps = 1 + ends - tps
    if len(fps) > 2:  # keep the corners only
        bends = np.logical_or(np.diff(fps, 2), np.diff(tps, 2))
        keep = np.nonzero(np.r_[True, bends, True])[0]
        fps, tps = fps[keep], tps[keep]
    fps, tps = np.r_[0, fps], np.r_[0, tps]
    return fps / fps[-1], tps / tps[-1]


def roc_auc(labels: Sequence[int], probs: Sequence[float]) -> float:
    """The area under the ROC curve of ``roc_points``: the AUROC of these scores, ties
    counted 1/2 (scikit-learn's ``roc_auc_score``, without importing it).

    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    return _area(*roc_points(labels, probs))


def _area(fpr: np.ndarray, tpr: np.ndarray) -> float:
    """The trapezoid area under the ROC points (a tie is a diagonal segment: 1/2)."""
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


def roc_svg(labels: Sequence[int], probs: Sequence[float], title: str) -> str:
    """The ROC curve over the chance diagonal, both axes 0 to 1 with ticks. The legend
    gives the area of the curve drawn, so it cannot disagree with the curve: a stored
    AUROC computed before its probabilities were rounded may differ (the entry page
    says so, ``entry_page.predictions_note``)."""
    fpr, tpr = roc_points(labels, probs)
    auroc = _area(fpr, tpr)
    if len(fpr) > 300:  # thin the polyline; the curve's shape is kept
        keep = np.unique(np.linspace(0, len(fpr) - 1, 300).astype(int))
        fpr, tpr = fpr[keep], tpr[keep]
    f = Frame(*SQUARE, (0.0, 1.0), (0.0, 1.0))
    points = " ".join(f.xy(float(a), float(b)) for a, b in zip(fpr, tpr, strict=True))
    name = f"probe (AUROC {auroc:.3f})"
    body = (f.axes(UNIT_TICKS, UNIT_TICKS, "false-positive rate", "true-positive rate")
            + f'<polyline points="{f.xy(0, 0)} {f.xy(1, 1)}" class="chance"/>'
            f'<polyline points="{points}" class="curve"/>'
            + _legend(f, [("curve", name), ("chance", "chance (diagonal)")],
                      x=f.x(0.45), y=f.y(0.16)))
    return _svg(*SQUARE, title, body)


def reliability_svg(labels: Sequence[int], probs: Sequence[float], title: str,
                    bins: int = 15) -> str:
    """Observed positive rate per bin of predicted P(positive), over the diagonal of
    perfect calibration; each bar's tooltip gives its prompts."""
    y = np.asarray(labels, dtype=float)
    p = np.asarray(probs, dtype=float)
    idx = np.minimum((p * bins).astype(int), bins - 1)
    f = Frame(*SQUARE, (0.0, 1.0), (0.0, 1.0))
    body = f.axes(UNIT_TICKS, UNIT_TICKS, "predicted P(positive)", "observed positive rate")
    for b in range(bins):
        mask = idx == b
        if not mask.any():
            continue
        rate = float(y[mask].mean())
        x0, x1 = b / bins, (b + 1) / bins
        left, top = f.x(x0) + 0.5, f.y(rate)
        body += (f'<rect x="{_num(left)}" y="{_num(top)}" '
                 f'width="{_num(f.x(x1) - f.x(x0) - 1)}" '
                 f'height="{_num(max(f.y(0) - top, 0))}" class="bar">'
                 f"<title>P in [{x0:.2f}, {x1:.2f}): {int(mask.sum())} prompts, positive rate "
                 f"{rate:.2f}</title></rect>")
    body += (f'<polyline points="{f.xy(0, 0)} {f.xy(1, 1)}" class="chance"/>'
             + _legend(f, [("chance", "perfect calibration")], x=f.x(0.05), y=f.y(0.93)))
    return _svg(*SQUARE, title, body)


def bars_frame(rows: Sequence[tuple[str, float, float, float]]) -> Frame:
    """The frame ``bars_svg`` draws ``rows`` in: its left margin fits the longest label,
    a row of 22 px per bar."""
    longest = max((len(r[0]) for r in rows), default=4)
    left = min(200, 16 + 6 * longest)
    height = 30 + 22 * len(rows) + 40
    return Frame(left + 330, height, (0.0, 1.0), (0.0, 1.0), left=left, right=46, top=18,
                 bottom=40)


def bars_svg(rows: Sequence[tuple[str, float, float, float]], title: str, *,
             x_label: str = "accuracy (95% CI)") -> str:
    """Horizontal bars with CI whiskers, best first: (label, value, low, high), values in
    [0, 1], on an axis from 0 to 1 with ticks."""
    ordered = sorted(rows, key=lambda r: (-r[1], r[0]))
    f = bars_frame(rows)
    left, width, height, row_h = f.left, f.width, f.height, 22
    parts = [f.axes(UNIT_TICKS, [], x_label, "")]
    labels, values = [], []
    for k, (label, value, low, high) in enumerate(ordered):
        y = 18 + 8 + k * row_h
        mid = y + 7
        lo, hi = _num(f.x(low)), _num(f.x(high))
        labels.append(f'<text x="{left - 6}" y="{mid + 4}">{escape(label)}</text>')
        values.append(f'<text x="{width - 40}" y="{mid + 4}">{value:.2f}</text>')
        # the whisker and its two caps: one path of three subpaths
        parts.append(f'<rect x="{left}" y="{y}" width="{_num(f.x(value) - left)}" '
                     f'height="14" class="bar"><title>{escape(label)}: {value:.3f} '
                     f"[{low:.3f}, {high:.3f}]</title></rect>"
                     f'<path d="M{lo},{mid}H{hi}M{lo},{mid - 4}V{mid + 4}M{hi},{mid - 4}'
                     f'V{mid + 4}" class="whisker"/>')
    if ordered:
        parts.append(f'<g class="blabel">{"".join(labels)}</g>'
                     f'<g class="value">{"".join(values)}</g>')
    return _svg(width, height, title, "".join(parts))


def interval_range(lows: Sequence[float], highs: Sequence[float]) -> tuple[float, float]:
    """An axis range over ``lows``..``highs``, rounded out to tenths, within [0, 1] and at
    least 0.2 wide.

    >>> interval_range([0.62, 0.7], [0.81, 0.9])
    (0.6, 0.9)
    """
    lo = max(0.0, float(np.floor(min(lows, default=0.0) * 10) / 10))
    hi = min(1.0, float(np.ceil(max(highs, default=1.0) * 10) / 10))
    if hi - lo < 0.2:
        lo, hi = max(0.0, hi - 0.2), max(hi, 0.2)
    return round(lo, 6), round(hi, 6)


def scores_svg(rows: Sequence[tuple[str, str, float, float, float]], title: str, *,
               x_label: str = "ProbeScore (95% CI)") -> str:
    """ProbeScores with CI whiskers, one line per entry in the given order: (group
    heading, label, value, low, high). A new group heading starts a new block; scores of
    different groups are drawn on one axis but never ranked against each other."""
    lows = [r[3] for r in rows]
    highs = [r[4] for r in rows]
    lo, hi = interval_range(lows, highs)
    step = 0.05 if hi - lo <= 0.3 + 1e-9 else 0.1
    longest = max((len(r[1]) for r in rows), default=4)
    left = min(260, 24 + 7 * longest)
    width, row_h = left + 560, 20
    lines: list[str | tuple[str, float, float, float]] = []
    last = None
    for group, label, value, low, high in rows:
        if group != last:
            lines.append(group)
            last = group
        lines.append((label, value, low, high))
    height = 22 + row_h * len(lines) + 42
    f = Frame(width, height, (lo, hi), (0.0, 1.0), left=left, right=44, top=14, bottom=42)
    parts = [f.axes(_ticks(lo, hi, step), [], x_label, "", x_step=step, y_axis=False)]
    for k, line in enumerate(lines):
        y = 14 + 10 + k * row_h + 6
        if isinstance(line, str):
            if k:
                parts.append(f'<line x1="4" y1="{y - 13}" x2="{width - 24}" y2="{y - 13}" '
                             'class="separator"/>')
            parts.append(f'<text x="4" y="{y + 4}" class="group">{escape(line)}</text>')
            continue
        label, value, low, high = line
        parts.append(f'<text x="{left - 10}" y="{y + 4}" class="blabel">{escape(label)}</text>'
                     f'<line x1="{_num(f.x(low))}" y1="{y}" x2="{_num(f.x(high))}" y2="{y}" '
                     f'class="whisker"/>'
                     f'<circle cx="{_num(f.x(value))}" cy="{y}" r="4" class="point">'
                     f"<title>{escape(label)}: {value:.3f} [{low:.3f}, {high:.3f}]</title>"
                     "</circle>"
                     f'<text x="{_num(f.x(high) + 6)}" y="{y + 4}" class="value">{value:.3f}'
                     "</text>")
    return _svg(width, height, title, "".join(parts))


def sweep_svg(layers: Sequence[int], series: Sequence[tuple[str, str, Sequence[float],
                                                             Sequence[float], Sequence[float]]],
              title: str) -> str:
    """Metrics per layer, each series (name, css class, values, CI lows, CI highs) a line
    over a shaded 95% CI band; the y axis spans the data, rounded out to tenths."""
    lows = [v for _, _, _, lo, _ in series for v in lo]
    y0 = max(0.0, float(np.floor(min(lows) * 10) / 10)) if lows else 0.0
    x_max = max(max(layers) if layers else 1, 1)
    f = Frame(600, 300, (0.0, float(x_max)), (y0, 1.0), left=54, right=14, top=30)
    step = max(1, int(np.ceil(len(layers) / 10)))
    parts = [f.axes([float(la) for la in layers[::step]], _ticks(y0, 1.0, 0.1), "layer",
                    "metric (95% CI band)", x_step=1, y_step=0.1)]
    for k, (name, css, values, lo, hi) in enumerate(series):
        upper = [f.xy(la, h) for la, h in zip(layers, hi, strict=True)]
        lower = [f.xy(la, v) for la, v in zip(layers, lo, strict=True)][::-1]
        line = " ".join(f.xy(la, v) for la, v in zip(layers, values, strict=True))
        parts.append(f'<polygon points="{" ".join(upper + lower)}" class="band {css}"/>'
                     f'<polyline points="{line}" class="series {css}"/>')
        for la, v, low, high in zip(layers, values, lo, hi, strict=True):
            parts.append(f'<circle cx="{_num(f.x(la))}" cy="{_num(f.y(v))}" r="2.5" '
                         f'class="dot {css}"><title>layer {la}: {escape(name)} {v:.3f} '
                         f"[{low:.3f}, {high:.3f}]</title></circle>")
        parts.append(f'<text x="{f.left + 10 + 150 * k}" y="20" class="legend {css}">'
                     f"{escape(name)}</text>")
    return _svg(600, 300, title, "".join(parts))


def _nice_step(span: float) -> float:
    """A tick step of 1, 2 or 5 times a power of ten giving about four to eight ticks.

    >>> _nice_step(3.2), _nice_step(0.7), _nice_step(12.0)
    (1.0, 0.2, 2.0)
    """
    raw = span / 6 if span > 0 else 1.0
    power = 10.0 ** np.floor(np.log10(raw))
    return float(next(m * power for m in (1, 2, 5, 10) if m * power >= raw))


def control_band(alphas: Sequence[float], controls: Sequence[float]
                 ) -> tuple[list[float], list[float]]:
    """(lows, highs) at each alpha of the random controls' lines, effect x alpha: the
    band a direction with no special role would fall in.

    >>> control_band([-2, 0, 2], [0.1, -0.3])
    ([-0.2, 0.0, -0.6], [0.6, 0.0, 0.2])
    """
    c = np.asarray(controls, dtype=np.float64)
    lows, highs = [], []
    for a in alphas:
        line = c * float(a)
        lows.append(round(float(line.min()), 9) + 0.0 if len(c) else 0.0)
        highs.append(round(float(line.max()), 9) + 0.0 if len(c) else 0.0)
    return lows, highs


def dose_response_frame(alphas: Sequence[float], curve: Sequence[float],
                        controls: Sequence[float]) -> tuple[Frame, float, float]:
    """(frame, x tick step, y tick step) of ``dose_response_svg``: the x axis spans the
    grid of alphas, the y axis the curve, the controls' band and 0, rounded out to ticks."""
    xs = [float(a) for a in alphas]
    lows, highs = control_band(xs, controls)
    values = [float(v) for v in curve] + lows + highs + [0.0]
    lo, hi = min(values), max(values)
    if hi - lo < 1e-9:
        lo, hi = lo - 1.0, hi + 1.0
    y_step = _nice_step(hi - lo)
    y0, y1 = float(np.floor(lo / y_step) * y_step), float(np.ceil(hi / y_step) * y_step)
    x0, x1 = min(xs), max(xs)
    if x1 - x0 < 1e-9:
        x0, x1 = x0 - 1.0, x1 + 1.0
    frame = Frame(420, 300, (x0, x1), (y0, y1), left=58, right=14, top=30)
    return frame, _nice_step(x1 - x0), y_step


def dose_response_svg(alphas: Sequence[float], curve: Sequence[float],
                      controls: Sequence[float], title: str, *,
                      y_label: str = "readout change") -> str:
    """The causal test's dose-response figure: the probe's mean readout change against
    the steering strength alpha (standard deviations), over the shaded range of the
    random controls' lines (each control's effect x alpha, min to max at each alpha)."""
    xs = [float(a) for a in alphas]
    ys = [float(v) for v in curve]
    lows, highs = control_band(xs, controls)
    f, x_step, y_step = dose_response_frame(xs, ys, controls)
    (x0, x1), (y0, y1) = f.x_range, f.y_range
    parts = [f.axes(_ticks(x0, x1, x_step), _ticks(y0, y1, y_step),
                    "steering strength alpha (standard deviations)", y_label,
                    x_step=x_step, y_step=y_step)]
    if controls:
        upper = [f.xy(a, h) for a, h in zip(xs, highs, strict=True)]
        lower = [f.xy(a, v) for a, v in zip(xs, lows, strict=True)][::-1]
        parts.append(f'<polygon points="{" ".join(upper + lower)}" class="band controls">'
                     f"<title>{len(controls)} random control directions: min to max of "
                     "effect x alpha</title></polygon>")
    parts.append(f'<polyline points="{f.xy(x0, 0)} {f.xy(x1, 0)}" class="chance"/>')
    line = " ".join(f.xy(a, v) for a, v in zip(xs, ys, strict=True))
    parts.append(f'<polyline points="{line}" class="series s1"/>')
    for a, v in zip(xs, ys, strict=True):
        parts.append(f'<circle cx="{_num(f.x(a))}" cy="{_num(f.y(v))}" r="2.5" '
                     f'class="dot s1"><title>alpha {a:g}: {v:.3f}</title></circle>')
    parts.append(f'<text x="{f.left + 10}" y="20" class="legend s1">the probe\'s direction'
                 "</text>")
    if controls:
        parts.append(f'<text x="{f.left + 170}" y="20" class="legend controls">random '
                     "controls (range)</text>")
    return _svg(420, 300, title, "".join(parts))


__all__ = ["SQUARE", "Frame", "bars_frame", "bars_svg", "control_band",
           "dose_response_frame", "dose_response_svg", "interval_range",
           "reliability_svg", "roc_auc", "roc_svg", "scores_svg", "sweep_svg"]
