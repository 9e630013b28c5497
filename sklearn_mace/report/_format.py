"""How the reports show numbers and tables: the few HTML primitives every section uses."""

import base64
import html
import io
from datetime import datetime, timezone

import numpy as np

__all__ = ["embed_figure", "fmt", "fmt_p", "html_page", "table"]

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#222;line-height:1.45;padding:0 1rem}
h1{margin-bottom:.2rem}h2{border-bottom:2px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #ccc;padding:.25rem .55rem;text-align:right}
th{background:#f3f3f3}td.text,th.text{text-align:left}
.cards{display:flex;gap:1rem;flex-wrap:wrap}
.card{border:1px solid #ccc;border-radius:8px;padding:.8rem 1rem;min-width:300px;flex:1}
.card .big{font-size:1.6rem;font-weight:600}
.leak{border-left:6px solid #c0392b}.inconclusive{border-left:6px solid #7f8c8d}
.bounded{border-left:6px solid #27ae60}.verdict{font-weight:600;margin:.2rem 0}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.9rem;color:#555}.muted{color:#666;font-size:.9rem}
.failed{color:#c0392b;font-size:.9rem}
.why{font-size:.92rem;margin:.3rem 0;padding-left:.4rem;border-left:2px solid #ddd}
"""


def fmt(value, digits=3):
    """A number as the report shows it (and as the tests look for it)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if np.isinf(value):
        return "∞"
    text = f"{value:.{digits}f}"
    # a value that rounds to zero prints unsigned: a loss of -1e-17 is not "-0.000"
    return text.lstrip("-") if float(text) == 0 else text


def fmt_p(value):
    """A p-value: two significant digits, scientific below 0.001."""
    if value is None or not np.isfinite(value):
        return "—"
    return f"{value:.2g}" if value >= 1e-3 else f"{value:.1e}"


def table(frame, text_columns=()):
    """A DataFrame as an HTML table; text cells left-aligned, numbers through :func:`fmt`."""
    head = "".join(
        f'<th class="{"text" if c in text_columns else ""}">{html.escape(str(c))}</th>'
        for c in frame.columns
    )
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            is_text = column in text_columns or isinstance(value, str)
            shown = html.escape(str(value)) if isinstance(value, str) else fmt(value)
            cells.append(f'<td class="{"text" if is_text else ""}">{shown}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def embed_figure(fig, name, caption):
    """``(png bytes, <figure> element)``: the figure embedded as base64, with its caption."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    png = buffer.getvalue()
    data = base64.b64encode(png).decode("ascii")
    element = (
        f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(caption)}" '
        f'data-file="figures/{name}"><figcaption>{html.escape(caption)}</figcaption></figure>'
    )
    return png, element


def html_page(title, n_rows, subtitle, body):
    """A self-contained report page: the title, a line on when and from what, the body."""
    inputs = ", ".join(f"{html.escape(k)}: {v} rows" for k, v in n_rows.items())
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{STYLE}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="muted">Generated {stamp} by sklearn-mace · inputs — {inputs} · {subtitle}</p>
{body}
</body></html>
"""
