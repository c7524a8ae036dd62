#!/usr/bin/env python3
"""Every relative link of the user's pages resolves, and the README stays a page.

Checks README.md, docs/*.md and bench/overhead/RESULTS.md (or the files given after the source
directory): each relative link or image must name a file or directory that exists, and a
`#fragment` must name a heading of the Markdown file it points into (GitHub's anchors: the
heading's text lower-cased, punctuation dropped, spaces made hyphens, `-1`, `-2`... for repeats)
or an explicit `<a name>`/`id`. Links inside code (fenced blocks, `spans`) are not links.
README.md must be at most 15360 bytes (issue 41: a user's page, not a lab notebook).

Prints one line per problem, `FILE:LINE: ...`, and exits 1 if there is any.
Usage: check_links.py SOURCE_DIR [FILE.md...]
"""
import glob
import os
import re
import sys
import unicodedata

README_MAX_BYTES = 15360

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_ANCHOR = re.compile(r"<a\s+[^>]*(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if match:
            marker = match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is None:
            yield number, line


def heading_text(raw):
    """The text GitHub renders for a heading's Markdown: code, links and emphasis unwrapped."""
    parts = CODE_SPAN.split(raw)  # [prose, ticks, code, prose, ticks, code, ..., prose]
    text = ""
    for index in range(0, len(parts), 3):
        prose = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", parts[index])
        prose = re.sub(r"<[^>]+>", "", prose)
        text += re.sub(r"\*+|(?<!\w)_+|_+(?!\w)", "", prose)
        if index + 2 < len(parts):
            text += parts[index + 2]
    return text


def slug(text):
    """GitHub's anchor for a heading's text (github-slugger)."""
    kept = []
    for ch in heading_text(text).strip().lower():
        category = unicodedata.category(ch)
        if ch in " -_" or category[0] in "LN" or category == "Mn":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        anchors, seen = set(), {}
        for _, line in prose_lines(text):
            match = HEADING.match(line)
            if match:
                base = slug(match.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                anchors.add(base if count == 0 else f"{base}-{count}")
            anchors.update(HTML_ANCHOR.findall(line))
        cache[path] = anchors
    return cache[path]


def links_of(text):
    """(line number, target) of each link; a link's text may run over several lines."""
    lines = text.splitlines()
    prose = set(number for number, _ in prose_lines(text))
    kept = "\n".join(line if number in prose else "" for number, line in enumerate(lines, 1))
    kept = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), kept)
    for match in INLINE_LINK.finditer(kept):
        yield kept.count("\n", 0, match.start()) + 1, match.group(1)
    for number, line in enumerate(kept.split("\n"), 1):
        match = REFERENCE_DEF.match(line)
        if match:
            yield number, match.group(1)


def problems_of(source_dir, page):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    shown = os.path.relpath(page, source_dir)
    for number, target in links_of(text):
        if not target or SCHEME.match(target) or target.startswith("//"):
            continue
        path, _, fragment = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(resolved):
            yield f"{shown}:{number}: broken link {target}: no file {os.path.relpath(resolved, source_dir)}"
            continue
        if fragment and resolved.endswith(".md") and fragment not in anchors_of(resolved):
            yield (f"{shown}:{number}: broken link {target}: no heading "
                   f"#{fragment} in {os.path.relpath(resolved, source_dir)}")


def main(argv):
    if len(argv) < 2:
        print("usage: check_links.py SOURCE_DIR [FILE.md...]", file=sys.stderr)
        return 2
    source_dir = os.path.abspath(argv[1])
    pages = [os.path.abspath(p) for p in argv[2:]] or (
        [os.path.join(source_dir, "README.md")]
        + sorted(glob.glob(os.path.join(source_dir, "docs", "*.md")))
        + [os.path.join(source_dir, "bench", "overhead", "RESULTS.md")])
    problems = []
    for page in pages:
        problems.extend(problems_of(source_dir, page))
    readme = os.path.join(source_dir, "README.md")
    if readme in pages and os.path.getsize(readme) > README_MAX_BYTES:
        problems.append(f"README.md: {os.path.getsize(readme)} bytes, over {README_MAX_BYTES}: "
                        "move reference text to docs/, measurements to bench/overhead/RESULTS.md")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
