"""The report's glossary page: ``glossary.html``, from the glossary shipped with skewlab
(``skewlab/resources/glossary.md``), linked from the index and from every chapter's page.

Example::

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     page = write_glossary(Path(d))
    ...     "<strong>key group</strong>" in page.read_text()
    True
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from skewlab.report.index import write_page

__all__ = ["glossary_markdown", "write_glossary"]


def glossary_markdown() -> str:
    """The glossary's markdown."""
    return (resources.files("skewlab") / "resources" / "glossary.md").read_text(encoding="utf-8")


def write_glossary(out_dir: Path) -> Path:
    """Write ``out_dir/glossary.html`` (self-contained, replaced whole) and return its path."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    body = markdown2html_mistune(glossary_markdown())
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>skewlab glossary</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 50rem; margin: 2rem auto; }}
body {{ line-height: 1.5; }} code {{ background: #f4f4f4; padding: 0 .2em; }}
</style></head>
<body>
<p><a href="index.html">skewlab report</a></p>
{body}
</body></html>
"""
    return write_page(Path(out_dir) / "glossary.html", page)
