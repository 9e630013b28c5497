"""Fail when a built page loads a script or a stylesheet from the network.

A privacy team often reads the documentation on a machine without internet: every page of
the site must load its scripts and stylesheets from the site itself (MathJax included,
``offline_math.py``). ``make docs`` runs this on the built site::

    python docs/check_offline.py docs/_build/html
"""

import re
import sys
from pathlib import Path

REMOTE = re.compile(r"""<(?:script|link)\b[^>]*\b(?:src|href)\s*=\s*["']((?:https?:)?//[^"']*)""")


def remote_references(folder):
    """Every remote script or stylesheet of the site's pages: page -> addresses."""
    folder = Path(folder)
    found = {}
    for page in sorted(folder.rglob("*.html")):
        addresses = REMOTE.findall(page.read_text("utf-8", errors="replace"))
        if addresses:
            found[str(page.relative_to(folder))] = addresses
    return found


def main(argv=None):
    (folder,) = sys.argv[1:] if argv is None else argv
    if not any(Path(folder).rglob("*.html")):
        print(f"{folder}: no built page to check", file=sys.stderr)
        return 1
    found = remote_references(folder)
    for page, addresses in found.items():
        print(f"{page} loads from the network: {', '.join(addresses)}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
