"""The theorem pages of the report: each paper's ``docs/bounds/<paper>.md`` rendered as HTML into the report's own
folder (``theorems/<paper>.html``, from the Jinja2 template ``theorem_page.html.j2``), so that the report's links
to them stay inside the folder and keep working when it is moved or copied.

Markdown is rendered by the ``markdown`` package where it is installed; without it the page shows the Markdown
text itself (``<pre>``), its headings still anchors. Every ``## heading`` carries the id
:func:`~dfltheory.figures.format.slug` gives it, the anchor the report's links name.
"""

from __future__ import annotations

import re
from pathlib import Path

from dfltheory.figures.format import slug

__all__ = ["FOLDER", "write_pages", "page_html"]

#: the report's sub-folder of theorem pages
FOLDER = "theorems"
_HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$")


def _markdown_html(text: str) -> str | None:
    """The Markdown as HTML, each heading with its :func:`slug` id; None without the ``markdown`` package."""
    try:
        import markdown
    except ImportError:
        return None
    lines, fenced = [], False
    for line in text.splitlines():
        fenced ^= line.lstrip().startswith("```")
        m = None if fenced else _HEADING.match(line)
        lines.append(f"{m[1]} {m[2]} {{: #{slug(m[2])} }}" if m else line)
    html = markdown.markdown("\n".join(lines), extensions=["attr_list", "tables", "fenced_code"])
    # a link to another Markdown file of the source tree: its rendered page where there is one, else plain text
    return re.sub(r'<a href="(?!#)([^"]*)">(.*?)</a>', _local_link, html)


def _local_link(m: re.Match) -> str:
    target, text = m[1], m[2]
    page, _, anchor = target.partition("#")
    if re.fullmatch(r"[\w-]+\.md", page):
        return f'<a href="{page[:-3]}.html{"#" + anchor if anchor else ""}">{text}</a>'
    return text


def page_html(title: str, markdown_text: str) -> str:
    """One theorem page: the rendered Markdown (or, without the ``markdown`` package, its text in sections)."""
    from dfltheory.figures.render import environment

    body = _markdown_html(markdown_text)
    sections = []
    if body is None:  # the fallback: the text, cut at its headings so that each is an anchor
        for line in markdown_text.splitlines():
            m = _HEADING.match(line)
            if m or not sections:
                sections.append({"level": len(m[1]) if m else 0, "heading": m[2] if m else "",
                                 "id": slug(m[2]) if m else "", "text": []})
            if not m:
                sections[-1]["text"].append(line)
        sections = [{**s, "text": "\n".join(s["text"]).strip("\n")} for s in sections]
    return environment().get_template("theorem_page.html.j2").render(title=title, body=body, sections=sections)


def write_pages(out: str | Path, papers=None, docs: Path | None = None) -> dict[str, str]:
    """Render ``docs/bounds/<paper>.md`` of ``papers`` (default every paper with such a page) into
    ``out/theorems/<paper>.html``; returns {paper: its path relative to ``out``}. Papers without a page (a plugin's,
    an installed wheel without docs/) get none: their discrepancies are listed without a link."""
    from dfltheory.bounds import PAPERS
    from dfltheory.figures.verdicts import DOCS

    docs = DOCS if docs is None else docs
    folder = Path(out) / FOLDER
    pages = {}
    for paper in papers or PAPERS:
        source = docs / f"{paper}.md"
        if not source.is_file():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{paper}.html").write_text(page_html(f"{paper}: {PAPERS.get(paper, paper)}", source.read_text()))
        pages[paper] = f"{FOLDER}/{paper}.html"
    return pages
