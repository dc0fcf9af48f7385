#!/usr/bin/env python3
"""An mdBook preprocessor (docs/book.toml): the guide's pages link to files outside
docs/ as a forge shows them (../book-format.md, ../CONTRIBUTING.md); in the book those
files are chapters that include them (reference/formats.md, …), so such links are
pointed there. Nothing else changes. Protocol: `supports RENDERER` answers by exit
status; otherwise [context, book] as JSON on stdin, the book on stdout."""

import json
import os
import posixpath
import re
import sys

# Files outside docs/ (relative to the repository) and the chapter that includes each.
INCLUDED = {
    "book-format.md": "reference/formats.md",
    "CONTRIBUTING.md": "reference/contributing.md",
    "CHANGELOG.md": "reference/changelog.md",
}
LINK = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")


def rewrite(content: str, chapter_path: str) -> str:
    here = posixpath.dirname(chapter_path)  # relative to docs/

    def fix(match: "re.Match[str]") -> str:
        target, anchor = match.group(1), match.group(2) or ""
        if "://" in target:
            return match.group(0)
        # The target relative to the repository root (docs/ is one level down).
        from_root = posixpath.normpath(posixpath.join("docs", here, target))
        if from_root in INCLUDED:
            chapter = INCLUDED[from_root]
            return "](" + posixpath.relpath(chapter, here or ".") + anchor + ")"
        return match.group(0)

    return LINK.sub(fix, content)


def walk(items):
    for item in items:
        chapter = item.get("Chapter") if isinstance(item, dict) else None
        if chapter:
            if chapter.get("path"):
                chapter["content"] = rewrite(chapter["content"], chapter["path"])
            walk(chapter.get("sub_items", []))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "supports":
        sys.exit(0)
    context, book = json.load(sys.stdin)
    walk(book.get("items", book.get("sections", [])))
    json.dump(book, sys.stdout)


if __name__ == "__main__":
    main()
