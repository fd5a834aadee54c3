"""The report's ``index.html``: one line per notebook, linking its page, failures marked.

The index is rewritten after every notebook and says whether the report is complete: a run in
progress or interrupted (Ctrl-C, a crash) never leaves an index that looks complete, nor the
previous run's index beside this run's pages.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

__all__ = ["write_index", "write_page"]


def write_index(result, *, total: int | None = None, state: str = "complete") -> Path:
    """Write ``result.index`` (a :class:`~skewlab.report.render.ReportResult`): one line per
    notebook with its title, summary and seconds, failures marked, under a line that says
    whether the report is ``complete``, ``rendering`` (``len(result.notebooks)`` of ``total``
    done) or ``interrupted``. The file is replaced whole (written beside it, then renamed).

    Example::

        >>> write_index(result, total=9, state="rendering")  # doctest: +SKIP
        PosixPath('reports/index.html')
    """
    if state not in ("complete", "rendering", "interrupted"):
        raise ValueError(f"index state {state!r}: use complete, rendering or interrupted")
    done = len(result.notebooks)
    total = done if total is None else total
    if state == "complete":
        headline = (
            f"Size <code>{html.escape(result.size)}</code>, rendered in {result.seconds:.0f} s.\n"
            "Each chart, table and printed block says whose figures it shows: this run's "
            "(measured on Apache Spark on this machine while the report rendered), the "
            "reference's shipped with skewlab (its machine and date), the seed's, or a model's "
            "or a simulation's."
        )
        if result.java_options_line():
            headline += f"\n{html.escape(result.java_options_line())}."
    elif state == "rendering":
        headline = (
            f'<span class="fail">Incomplete: rendering, {done} of {total} notebooks done</span> '
            f"(size <code>{html.escape(result.size)}</code>); this page is rewritten after each."
        )
    else:
        headline = (
            f'<span class="fail">Incomplete: interrupted after {done} of {total} notebooks'
            f"</span> (size <code>{html.escape(result.size)}</code>); the notebooks not listed "
            "were not rendered by this run. Run <code>skewlab report</code> again."
        )
    rows = []
    for nb in result.notebooks:
        status = (
            f'<span class="fail">failed: {html.escape(nb.error or "")}</span>'
            if not nb.ok
            else f'<span class="ok">{nb.seconds:.0f} s</span>'
        )
        claims = nb.claims_line()
        claims = f'<br><span class="claims">{html.escape(claims)}</span>' if claims else ""
        rows.append(
            f'<li><a href="{html.escape(nb.html.name)}">{html.escape(nb.title)}</a> '
            f"&mdash; {html.escape(nb.summary)} {status}{claims}</li>"
        )
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>skewlab report</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; }}
body {{ line-height: 1.5; }}
li {{ margin: .6rem 0; }} .ok {{ color: #666; font-size: .9em; }}
.fail {{ color: #b00; font-weight: bold; }} .claims {{ font-size: .9em; }}
</style></head>
<body>
<h1>skewlab &mdash; hot keys in stateful stream aggregation</h1>
<p id="status" data-state="{state}">{headline}</p>
<p>Every chapter's claims are checked on this run and on the reference (a full-size run shipped
with skewlab), beside the seed's figure. A verdict is <em>held</em> or <em>not held</em> only
where the interval over the runs (shown beside it) passes or fails the claim's check as a whole,
<em>inconclusive</em> where the runs cannot tell, and a <em>measurement error</em> where a figure
breaks a physical bound (a job ratio beyond its operators' ratio). Words:
<a href="glossary.html">the glossary</a>.</p>
<ol>
{chr(10).join(rows)}
</ol>
</body></html>
"""
    return write_page(result.index, page)


def write_page(path: Path, page: str) -> Path:
    """Replace ``path`` whole with ``page``: written beside it, then renamed, so that a reader
    never opens half a page.

    Example::

        >>> import tempfile
        >>> write_page(Path(tempfile.mkdtemp()) / "p.html", "<p>x</p>").read_text()
        '<p>x</p>'
    """
    partial = path.with_name(path.name + ".partial")
    partial.write_text(page, encoding="utf-8")
    os.replace(partial, path)
    return path
