"""The report's ``index.html``: one line per notebook, linking its page, failures marked."""

from __future__ import annotations

import html
from pathlib import Path

__all__ = ["write_index"]


def write_index(result) -> Path:
    """Write ``result.index`` (a :class:`~skewlab.report.render.ReportResult`): one line per
    notebook with its title, summary and seconds, failures marked."""
    rows = []
    for nb in result.notebooks:
        status = (
            f'<span class="fail">failed: {html.escape(nb.error or "")}</span>'
            if not nb.ok
            else f'<span class="ok">{nb.seconds:.0f} s</span>'
        )
        rows.append(
            f'<li><a href="{html.escape(nb.html.name)}">{html.escape(nb.title)}</a> '
            f"&mdash; {html.escape(nb.summary)} {status}</li>"
        )
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>skewlab report</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; }}
body {{ line-height: 1.5; }}
li {{ margin: .6rem 0; }} .ok {{ color: #666; font-size: .9em; }}
.fail {{ color: #b00; font-weight: bold; }}
</style></head>
<body>
<h1>skewlab &mdash; hot keys in stateful stream aggregation</h1>
<p>Size <code>{html.escape(result.size)}</code>, rendered in {result.seconds:.0f} s.
Every chart was measured on Apache Spark when this report was made.</p>
<ol>
{chr(10).join(rows)}
</ol>
</body></html>
"""
    result.index.write_text(page, encoding="utf-8")
    return result.index
