"""Regenerate docs/areas/*.md from the area packages (their docstrings, papers.py, __all__) and README.md.

Run from the repository root after adding an area or changing an area's __all__: ``python docs/gen_area_pages.py``.
The pages are committed; mkdocs does not run this script.
"""
import importlib
import inspect
import re
import sys
import types
from pathlib import Path

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from jaxlab.core import citations
from jaxlab.core.verification import discover_areas, load_area

ROOT = Path(__file__).resolve().parent.parent
readme = (ROOT / "README.md").read_text()

# table rows: area -> (paper cell, notebook)
rows = {}
for line in readme.splitlines():
    if line.startswith("| ") and not line.startswith("| area") and not line.startswith("|---"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5:
            rows[cells[0]] = cells
# usage snippets
usage = readme.split("## Usage by area", 1)[1].split("\n## ", 1)[0]
snips = {}
for m in re.finditer(r"^### (\w+)\n\n(.*?)\n```python\n(.*?)```", usage, re.S | re.M):
    snips[m.group(1)] = (m.group(2).strip(), m.group(3))

def field(bib, name):
    m = re.search(rf"^\s*{name}\s*=\s*[{{\"](.*?)[}}\"]\s*,?\s*$", bib, re.M | re.I)
    return m.group(1).strip() if m else None

def clean(s):
    s = re.sub(r"\\[\"'`^~]\{?(\w)\}?", r"\1", s)
    return s.replace("{", "").replace("}", "").replace("\\&", "&").replace("--", "–")

def flip(a):
    if "," in a:
        last, first = a.split(",", 1)
        return f"{first.strip()} {last.strip()}"
    return a

def paper_lines(papers_mod):
    importlib.import_module(papers_mod)
    out = []
    for key, p in citations._PAPERS.items():
        if papers_mod not in citations._ORIGINS.get(key, []):
            continue
        bib = p.bibtex
        title = clean(field(bib, "title") or key)
        authors = field(bib, "author")
        if authors:
            authors = clean(", ".join(flip(a.strip()) for a in re.split(r"\s+and\s+", authors)))
        else:
            authors = "authors not recorded"
        year = field(bib, "year") or ""
        ids = []
        for f in ("eprint", "arxiv", "journal", "booktitle", "note", "url"):
            v = field(bib, f)
            if v:
                v = clean(v)
                ids.append(f"arXiv:{v}" if f in ("eprint", "arxiv") and not v.lower().startswith("arxiv") else v)
        line = f"- *{title}*. {authors}"
        if year:
            line += f" ({year})"
        if ids:
            line += ". " + "; ".join(ids)
        out.append(line + f". `jaxlab cite {key}`")
    return out

OPTS = """    options:
      show_root_heading: false
      show_root_toc_entry: false
      members: false
"""

GRIFFE = griffe.load("jaxlab", search_paths=[str(ROOT)], resolve_aliases=False)

def resolvable(path):
    try:
        obj = GRIFFE[path.split(".", 1)[1]]
        if obj.is_alias:
            _ = obj.final_target  # raises if the alias cannot be resolved
        return True
    except Exception:
        return False

def member_block(pkg, name, obj):
    if not resolvable(f"{pkg}.{name}"):
        return f"### `{name}`\n\n`{name} = {obj!r}` (a module constant; see its module's docstring).\n"
    if isinstance(obj, types.ModuleType):
        return f"### `{name}`\n\n::: {obj.__name__}\n" + OPTS
    return f"::: {pkg}.{name}\n"

def api(pkg):
    mod = importlib.import_module(pkg)
    names = list(getattr(mod, "__all__", []))
    parts = []
    for n in names:
        parts.append(member_block(pkg, n, getattr(mod, n)))
    return "\n".join(parts)

KEPT = "## What reproduces and what does not"


def kept_section(path):
    """The hand-written "what reproduces" section of an existing page, kept as it is (``None`` if it has none)."""
    if not path.exists() or KEPT not in path.read_text():
        return None
    body = path.read_text().split(KEPT, 1)[1].split("\n## ", 1)[0]
    return KEPT + body.rstrip() + "\n"


def negative_section(area):
    """The area's documented negative results (claims registered with ``expected="not reproduced"``)."""
    neg = [c for c in load_area(area) if not c.reproduced]
    if not neg:
        return None
    lines = [KEPT + "\n", "Every other claim of the area reproduces. Documented negative results (the claim asserts "
             "the measured opposite; `jaxlab list --negative` prints each diagnosis):\n"]
    for c in neg:
        summary = " ".join(c.doc.split("\n\n")[0].split())
        lines.append(f"- `{area}:{c.name}`: {summary}")
    return "\n".join(lines) + "\n"


def page(area, pkg, title_hint):
    mod = importlib.import_module(pkg)
    doc = inspect.getdoc(mod) or ""
    first = doc.split("\n\n")[0].replace("\n", " ")
    row = rows.get(area)
    out = [f"# {area}: {first.rstrip('.')}\n" if len(first) < 160 else f"# {area}\n"]
    out.append(f"Area `{area}` · package `{pkg}` · `jaxlab verify {area}`\n")
    out.append("## The paper\n")
    try:
        pl = paper_lines(pkg + ".papers")
    except ModuleNotFoundError:
        pl = []
    if row:
        out.append(f"{row[1]}\n")
    if pl:
        out.append("Registered papers (BibTeX with `jaxlab cite KEY`):\n")
        out.extend(pl)
        out.append("")
    if row and row[3] not in ("—", ""):
        nb = row[3].strip("`").split("/")[-1]
        out.append(f"Notebook: [{nb}](../notebooks/{nb}) (the claims, measured and plotted).\n")
    section = kept_section(ROOT / "docs" / "areas" / f"{area}.md") or negative_section(area)
    if section:
        out.append(section)
    out.append("## The maths\n")
    out.append(f"::: {pkg}\n" + OPTS)
    out.append("## Worked example\n")
    if area in snips:
        desc, code = snips[area]
        first = code.split("\n", 1)[0]  # README snippets import what they use; older ones relied on this line
        head = "" if first.startswith("import") and "jax" in first else "import jax, jax.numpy as jnp\n"
        out.append(f"{desc[:1].upper() + desc[1:]}\n\n```python\n{head}{code}```\n")
    out.append("## API\n")
    out.append(f"Every name in `{pkg}.__all__`.\n")
    out.append(api(pkg))
    return "\n".join(out)

areas = discover_areas()
outdir = ROOT / "docs" / "areas"
outdir.mkdir(parents=True, exist_ok=True)
for area, claims_mod in sorted(areas.items()):
    pkg = claims_mod.rsplit(".", 1)[0]
    (outdir / f"{area}.md").write_text(page(area, pkg, None))
    print(area, pkg)
