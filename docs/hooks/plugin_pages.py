"""mkdocs hook: one page per installed quadriga plugin, generated at build time.

Each page is made from the plugin's registry metadata (components with their parameters,
pipelines, claims with the numbers of the newest ``quadriga verify`` report found under
``verify/``, if any) followed by the plugin's README. Nothing is written into ``docs/``;
the pages exist only in the built site. Run ``python docs/hooks/plugin_pages.py OUT_DIR``
to write the same pages as files.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
_LINK = re.compile(r"(!?)\[([^\]]*)\]\((?!https?:|#|mailto:)([^)\s]+)\)")


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _readme(dist: str) -> str:
    """The distribution's README, headings one level down, relative links made plain text."""
    text = ""
    local = ROOT / "plugins" / dist / "README.md"
    if local.is_file():
        text = local.read_text(encoding="utf-8")
    else:
        try:
            text = md.metadata(dist).get_payload() or ""  # type: ignore[attr-defined]
        except Exception:
            text = ""
    lines = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("#"):
            line = "#" + line
        elif not fenced:
            line = _LINK.sub(lambda m: "" if m.group(1) else f"{m.group(2)} (`{m.group(3)}`)", line)
        lines.append(line)
    return "\n".join(lines)


def _last_verified() -> dict[str, dict[str, Any]]:
    """``{claim: record}`` from the newest ``verify/**/report.json`` holding each claim."""
    found: dict[str, dict[str, Any]] = {}
    for report in sorted((ROOT / "verify").glob("**/report.json"), key=lambda p: p.parent.name):
        try:
            for record in json.loads(report.read_text()):
                found[record["name"]] = dict(record, report=str(report.relative_to(ROOT)))
        except Exception:
            continue
    return found


def _type_names(types: tuple) -> list[str]:
    """Names of the classes (or legacy name strings) an input accepts."""
    return [getattr(t, "__name__", str(t)) for t in types]


def plugin_pages() -> dict[str, str]:
    """``{distribution: markdown}`` for every plugin distribution that registers something."""
    from quadriga.params import describe_params
    from quadriga.registry import Registry
    from quadriga.tracking import available

    registry = Registry(use_env=False)
    verified = _last_verified()
    dists = sorted(
        {c.distribution for c in registry.components()}
        | {p.distribution for p in registry.pipelines()}
        | {c.distribution for c in registry.claims()}
        | set(available(registry).values())  # trackers (--with NAME) register hooks only
    )
    pages = {}
    for dist in dists:
        try:
            meta = md.metadata(dist)
            version, summary = meta["Version"], meta["Summary"] or ""
        except md.PackageNotFoundError:
            version, summary = "", ""
        out = [
            f"# {dist}",
            "",
            f"{summary}",
            "",
            f"Version {version}. Install: `pip install -e plugins/{dist}` "
            "(the Makefile installs every plugin). Generated from the plugin's registry entries and README.",
            "",
        ]
        comps = [c for c in registry.components() if c.distribution == dist]
        if comps:
            out += ["## Components", ""]
        for c in comps:
            out += [f"### {c.kind} `{c.name}`", "", _cell(c.summary), ""]
            if c.paper:
                out += [f"Paper: {c.paper}", ""]
            try:
                cls = registry.load_class(c)
                rows = describe_params(cls)
                inputs = getattr(cls, "input_types", {}) or {}
                output = getattr(getattr(cls, "output_type", ""), "__name__", "")
            except Exception as exc:
                out += [f"(could not be imported: {_cell(exc)})", ""]
                continue
            if inputs:
                out += [
                    "Inputs: "
                    + ", ".join(f"`{k}` ({' or '.join(_type_names(v))})" for k, v in inputs.items())
                    + (f"; output: {output}." if output else "."),
                    "",
                ]
            if rows:
                out += ["| parameter | type | default | description |", "| --- | --- | --- | --- |"]
                out += [
                    f"| `{r['name']}` | {_cell(r['type'])} | `{_cell(r['default'])}` | {_cell(r['doc'])} |"
                    for r in rows
                ]
                out.append("")
        pipes = [p for p in registry.pipelines() if p.distribution == dist]
        if pipes:
            out += ["## Pipelines", "", "| pipeline | what it runs |", "| --- | --- |"]
            out += [f"| `quadriga run {p.name}` | {_cell(p.summary)} |" for p in pipes]
            out.append("")
        claims = [c for c in registry.claims() if c.distribution == dist]
        if claims:
            out += [
                "## Claims",
                "",
                f"`quadriga verify {dist}` runs them (`--scale paper` for the full check).",
                "",
                "| claim | statement | paper | last measured |",
                "| --- | --- | --- | --- |",
            ]
            for c in claims:
                rec = verified.get(c.name)
                last = (
                    f"{rec['status']} at {rec.get('scale')} scale: {_cell(rec.get('summary'))}"
                    if rec
                    else "see the README below"
                )
                out.append(f"| `{c.name}` | {_cell(c.summary)} | {_cell(c.paper)} | {last} |")
            out.append("")
        readme = _readme(dist)
        if readme.strip():
            out += ["## README", "", readme, ""]
        pages[dist] = "\n".join(out)
    return pages


def _index(pages: dict[str, str]) -> str:
    lines = [
        "# Plugins",
        "",
        "One page per installed plugin distribution, generated from its registry entries "
        "(components, parameters, pipelines, claims) and its README.",
        "",
    ]
    lines += [f"- [{d}]({d}.md)" for d in pages]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- mkdocs hooks
_PAGES: dict[str, str] = {}


def on_config(config: Any) -> Any:
    """Generate the pages once and add them to the navigation."""
    _PAGES.clear()
    _PAGES.update(plugin_pages())
    entry = {"Plugins": ["plugins/index.md", *[{d: f"plugins/{d}.md"} for d in _PAGES]]}
    nav = config.get("nav") or []
    config["nav"] = [item for item in nav if not (isinstance(item, dict) and "Plugins" in item)] + [entry]
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, "plugins/index.md", content=_index(_PAGES)))
    for dist, text in _PAGES.items():
        files.append(File.generated(config, f"plugins/{dist}.md", content=text))
    return files


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "plugin-pages")
    target.mkdir(parents=True, exist_ok=True)
    pages = plugin_pages()
    (target / "index.md").write_text(_index(pages))
    for dist, text in pages.items():
        (target / f"{dist}.md").write_text(text)
    print(f"wrote {len(pages) + 1} pages to {target}")
