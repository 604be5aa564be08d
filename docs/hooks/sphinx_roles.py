"""mkdocs hook: Sphinx roles in docstrings (``:class:`~quadriga.errors.ConfigError```) as links.

The core's docstrings cross-reference with Sphinx roles, which Markdown renders as the role's
name followed by code (``:class:<code>~a.B</code>``). This hook turns each into an optional
mkdocs-autorefs reference: a link when the target is on an API page, plain code otherwise (no
warning). A leading ``~`` shows only the last part of the name, as in Sphinx.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj|const):<code>(~?)([\w.]+)(\(\))?</code>")


def _ref(match: re.Match[str]) -> str:
    tilde, target, call = match.group(1), match.group(2), match.group(3) or ""
    shown = target.rsplit(".", 1)[-1] if tilde else target
    return f'<autoref identifier="{target}" optional><code>{shown}{call}</code></autoref>'


def on_page_content(html: str, **kwargs: Any) -> str:
    """Replace the Sphinx roles of one page's HTML (mkdocs ``on_page_content`` event)."""
    return _ROLE.sub(_ref, html)
