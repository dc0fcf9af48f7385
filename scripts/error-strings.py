#!/usr/bin/env python3
"""Lists the `String` payloads of public error types, from cargo public-api's list
(api/public-api.txt, or the file given) and the sources (which types are errors: a
`derive(... Error ...)` or an `impl Error for`). A matchable error carries typed
causes, paths as paths and numbers as numbers; a message string is none of these.
Exits 1 when there is one.

    scripts/error-strings.py [LIST]
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
listing = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "api" / "public-api.txt"
errors = set()
for path in (root / "src").rglob("*.rs"):
    text = path.read_text()
    for m in re.finditer(r"#\[derive\(([^)]*)\)\](?:\s*#\[[^\n]*\])*\s*pub (?:enum|struct) (\w+)", text):
        if re.search(r"\bError\b", m.group(1)):
            errors.add(m.group(2))
    errors.update(re.findall(r"impl (?:std::error::|core::error::)?Error for (\w+)", text))

found = []
for line in listing.read_text().splitlines():
    if not line.startswith("pub thorbook::") or "String" not in line:
        continue
    path = line.split()[1].split("(")[0].rstrip(":").split("::")
    if any(p in errors for p in path[:-1]) or (path[-1] in errors and "(" in line):
        found.append(line)
for line in found:
    print(line)
print(f"{len(found)} String payloads in public error types ({len(errors)} error types)")
sys.exit(1 if found else 0)
