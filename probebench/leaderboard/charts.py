"""Small inline SVG figures, made at build time: ROC curve, reliability diagram, bars."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

W, H, PAD = 260, 220, 34


def _frame(title: str, x_label: str, y_label: str, body: str) -> str:
    axes = (f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - 8}" y2="{H - PAD}" class="axis"/>'
            f'<line x1="{PAD}" y1="8" x2="{PAD}" y2="{H - PAD}" class="axis"/>'
            f'<text x="{(W + PAD) / 2}" y="{H - 6}" class="label">{escape(x_label)}</text>'
            f'<text x="10" y="{(H - PAD) / 2}" class="label" '
            f'transform="rotate(-90 10 {(H - PAD) / 2})">{escape(y_label)}</text>'
            f'<text x="{PAD}" y="{H - PAD + 12}" class="tick">0</text>'
            f'<text x="{W - 14}" y="{H - PAD + 12}" class="tick">1</text>'
            f'<text x="{PAD - 12}" y="14" class="tick">1</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" '
            f'height="{H}" role="img" aria-label="{escape(title)}"><title>{escape(title)}'
            f"</title>{axes}{body}</svg>")


def _xy(x: float, y: float) -> str:
    return f"{PAD + x * (W - 8 - PAD):.1f},{H - PAD - y * (H - PAD - 8):.1f}"


def roc_svg(labels: Sequence[int], probs: Sequence[float], title: str) -> str:
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(np.asarray(labels), np.asarray(probs))
    if len(fpr) > 300:  # thin the polyline; the curve's shape is kept
        keep = np.unique(np.linspace(0, len(fpr) - 1, 300).astype(int))
        fpr, tpr = fpr[keep], tpr[keep]
    points = " ".join(_xy(float(a), float(b)) for a, b in zip(fpr, tpr, strict=True))
    body = (f'<polyline points="{_xy(0, 0)} {_xy(1, 1)}" class="chance"/>'
            f'<polyline points="{points}" class="curve"/>')
    return _frame(title, "false-positive rate", "true-positive rate", body)


def reliability_svg(labels: Sequence[int], probs: Sequence[float], title: str,
                    bins: int = 15) -> str:
    y = np.asarray(labels, dtype=float)
    p = np.asarray(probs, dtype=float)
    idx = np.minimum((p * bins).astype(int), bins - 1)
    body = f'<polyline points="{_xy(0, 0)} {_xy(1, 1)}" class="chance"/>'
    for b in range(bins):
        mask = idx == b
        if not mask.any():
            continue
        rate = float(y[mask].mean())
        x0, x1 = b / bins, (b + 1) / bins
        (left, top), (right, bottom) = (_xy(x0, rate).split(","), _xy(x1, 0).split(","))
        body += (f'<rect x="{left}" y="{top}" width="{float(right) - float(left) - 1:.1f}" '
                 f'height="{max(float(bottom) - float(top), 0):.1f}" class="bar">'
                 f"<title>P in [{x0:.2f}, {x1:.2f}): {int(mask.sum())} prompts, positive rate "
                 f"{rate:.2f}</title></rect>")
    return _frame(title, "predicted P(positive)", "observed positive rate", body)


def bars_svg(rows: Sequence[tuple[str, float, float, float]], title: str) -> str:
    """Horizontal bars with CI whiskers: (label, value, low, high), values in [0, 1]."""
    row_h, left, width = 18, 150, 200
    height = 20 + row_h * len(rows)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {left + width + 50} '
             f'{height}" width="{left + width + 50}" height="{height}" role="img" '
             f'aria-label="{escape(title)}"><title>{escape(title)}</title>']
    for k, (label, value, low, high) in enumerate(rows):
        y = 10 + k * row_h
        parts.append(f'<text x="{left - 6}" y="{y + 12}" class="blabel">{escape(label)}</text>'
                     f'<rect x="{left}" y="{y + 2}" width="{value * width:.1f}" height="12" '
                     f'class="bar"><title>{escape(label)}: {value:.3f} [{low:.3f}, '
                     f'{high:.3f}]</title></rect>'
                     f'<line x1="{left + low * width:.1f}" y1="{y + 8}" '
                     f'x2="{left + high * width:.1f}" y2="{y + 8}" class="whisker"/>'
                     f'<text x="{left + width + 4}" y="{y + 12}" class="tick">{value:.2f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def sweep_svg(layers: Sequence[int], series: Sequence[tuple[str, str, Sequence[float],
                                                             Sequence[float], Sequence[float]]],
              title: str) -> str:
    """Metrics per layer, each series (name, css class, values, CI lows, CI highs) a line
    over a shaded 95% CI band; the y axis spans the data, rounded out to tenths."""
    width, height, left, bottom = 560, 260, 40, 30
    lows = [v for _, _, _, lo, _ in series for v in lo]
    y0 = max(0.0, np.floor(min(lows) * 10) / 10) if lows else 0.0
    y1 = 1.0
    x_max = max(layers) if layers else 1

    def xy(layer: float, v: float) -> tuple[float, float]:
        x = left + (layer / max(x_max, 1)) * (width - left - 10)
        y = height - bottom - (v - y0) / (y1 - y0) * (height - bottom - 10)
        return x, y

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}">'
             f"<title>{escape(title)}</title>"
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" '
             f'y2="{height - bottom}" class="axis"/>'
             f'<line x1="{left}" y1="10" x2="{left}" y2="{height - bottom}" class="axis"/>'
             f'<text x="{(width + left) / 2}" y="{height - 4}" class="label">layer</text>']
    for tick in np.arange(y0, y1 + 1e-9, 0.1):
        _, y = xy(0, float(tick))
        parts.append(f'<text x="{left - 4}" y="{y + 3:.1f}" class="blabel">{tick:.1f}</text>'
                     f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" '
                     f'class="grid"/>')
    step = max(1, len(layers) // 10)
    for layer in layers[::step]:
        x, _ = xy(layer, y0)
        parts.append(f'<text x="{x:.1f}" y="{height - bottom + 12}" class="tick">{layer}</text>')
    for k, (name, css, values, lo, hi) in enumerate(series):
        upper = [xy(la, h) for la, h in zip(layers, hi, strict=True)]
        lower = [xy(la, v) for la, v in zip(layers, lo, strict=True)][::-1]
        band = " ".join(f"{x:.1f},{y:.1f}" for x, y in upper + lower)
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in
                        (xy(la, v) for la, v in zip(layers, values, strict=True)))
        parts.append(f'<polygon points="{band}" class="band {css}"/>'
                     f'<polyline points="{line}" class="series {css}"/>')
        for la, v, low, high in zip(layers, values, lo, hi, strict=True):
            x, y = xy(la, v)
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" class="dot {css}">'
                         f"<title>layer {la}: {escape(name)} {v:.3f} [{low:.3f}, {high:.3f}]"
                         "</title></circle>")
        parts.append(f'<text x="{left + 10 + 150 * k}" y="22" class="legend {css}">'
                     f"{escape(name)}</text>")
    parts.append("</svg>")
    return "".join(parts)
