#!/usr/bin/env python3
"""Fails when a doc names a file, a folder or a section that does not exist.

Run as: python3 tests/docs/doc_paths_test.py [--root DIR]; registered as the ctest test
`docs.paths`. It reads README.md and every docs/**/*.md of the repository, outside fenced code
blocks, and checks:

- Repository paths. Every word in backticks or in parentheses whose first component is a
  top-level file or folder of the repository (`engine/decider.h`, (docs/TESTING.md),
  `storage/sqlite/`, `README.md`) must exist; `reckon/x/y.h` is an include path and names
  `x/y.h`. A trailing `:LINE` is ignored. Skipped, by rule: a word with a placeholder or a
  glob in it (any of * ? [ ] { } < > $ ... or the ellipsis character), a word whose first
  component is not in the repository (`build/...`, `/etc/reckon/...`, `and/or`), and the MCP
  methods `tools/list` and `tools/call` (NOT_PATHS).
- Links. A markdown link's target (`[text](decisions/05-x.md)`) is resolved from the doc's own
  folder, as a renderer does; web addresses and bare #anchors are skipped.
- Sections. `docs/X.md, "Section"`, `README.md, "Section"` (also `X.md "Section"`,
  `X.md ("Section")`, and a bare `X.md` meaning docs/X.md), in a doc or in a source file's
  comment, need a heading of exactly that text in that file (case and markdown emphasis
  aside; a heading's annotation after " (" or " \u2014 " may be left out, and a paragraph that
  opens with a bold phrase is a run-in heading); `docs/X.md, section N` needs a heading
  numbered N.
- The architecture map. docs/ARCHITECTURE.md's "Layers" table (one row per part: level, part,
  what it may use) says what cmake/check_layers.py's LEVELS and ALLOWED say, and its decision
  index links every file of docs/decisions/ (links to missing files fail as links; a number
  reserved for a decision still being written is listed without a link).
- The README's layout table names every top-level folder of the repository.

"The repository" is what git tracks, plus new files git does not ignore; without git, the
files under the root, less build*/ and hidden folders.
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys

# Words in backticks that look like repository paths and are not: MCP methods, which share their
# first component with the tools/ folder.
NOT_PATHS = {"tools/list", "tools/call"}
# Source files whose comments cite docs by section.
SOURCES = (".h", ".cc", ".py", ".cmake", ".in", ".sh", ".capnp", "CMakeLists.txt")
PLACEHOLDER = re.compile(r"[*?\[\]{}<>$\u2026]|\.\.\.")
WORD = re.compile(r"^[A-Za-z0-9_.\-/]+$")
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`]+)`")
PARENS = re.compile(r"\(([^()]*)\)")
DOC = r"(?<![\w/.-])`?((?:docs/)?(?:decisions/)?[A-Za-z0-9_.\-]+\.md|README)`?"
SECTION_REF = re.compile(DOC + r"\)?,?\s*\(?\"([^\"]+)\"")
NUMBERED_REF = re.compile(DOC + r",?\s*section (\d+)")


def repository_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, text=True, check=True)
        files = {line for line in out.stdout.splitlines() if os.path.exists(os.path.join(root, line))}
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = set()
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        for name in names:
            files.add(os.path.relpath(os.path.join(directory, name), root))
    return files


class Repository:
    def __init__(self, root):
        self.root = root
        self.files = repository_files(root)
        self.dirs = set()
        for path in self.files:
            parts = path.split("/")
            for n in range(1, len(parts)):
                self.dirs.add("/".join(parts[:n]))
        self.top = {p.split("/")[0] for p in self.files}

    def exists(self, path):
        path = os.path.normpath(path)
        return path in self.files or path in self.dirs

    def docs(self):
        return sorted(p for p in self.files
                      if p == "README.md" or (p.startswith("docs/") and p.endswith(".md")))


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def prose(text):
    """The text outside fenced code blocks, its lines joined by spaces (for multi-line refs)."""
    return " ".join(line.strip() for _, line in prose_lines(text))


def path_words(span):
    for word in re.split(r"[\s,;]+", span):
        word = word.strip(".,:;\"'`()")
        word = re.sub(r":\d+(-\d+)?$", "", word)
        if word and not PLACEHOLDER.search(word) and WORD.match(word):
            yield word


def check_paths(repo, doc, text):
    problems = []
    here = os.path.dirname(doc)
    for number, line in prose_lines(text):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if PLACEHOLDER.search(path):
                continue
            resolved = os.path.normpath(os.path.join(here, path))
            if not repo.exists(resolved):
                problems.append(f"{doc}:{number}: links to {target}, and {resolved} does not exist")
        bare = LINK.sub(" ", line)
        spans = CODE.findall(bare) + PARENS.findall(CODE.sub(" ", bare))
        for span in spans:
            for word in path_words(span):
                path = word[len("reckon/"):] if word.startswith("reckon/") else word
                if path.split("/")[0] not in repo.top or word in NOT_PATHS:
                    continue
                if not repo.exists(path):
                    problems.append(f"{doc}:{number}: names {word}, which does not exist")
    return problems


def heading_key(text):
    text = re.sub(r"[`*_]", "", text).strip().rstrip("#").strip()
    return re.sub(r"\s+", " ", text).lower()


def headings(text):
    """The keys a section reference may use: each heading's text and, for a heading that carries
    an annotation after its title ("Payload codec (issue 11) — `bench/...`"), the title alone.
    A run-in heading (a paragraph or list item that opens with bold text ending in a period or
    a colon, "**History pages.** A task's ...") counts as a heading."""
    keys = set()
    for _, line in prose_lines(text):
        m = re.match(r"^#{1,6}\s+(.*)$", line) or \
            re.match(r"^\s*(?:[-*]\s+)?\*\*([^*]+?)[.:]?\*\*", line)
        if not m:
            continue
        key = heading_key(m.group(1))
        keys.add(key)
        keys.add(re.split(r" \(| \u2014 ", key)[0].rstrip(".:"))
    return keys


def doc_path(repo, name):
    if name == "README":
        return "README.md"
    if name.startswith("docs/") or name == "README.md":
        return name
    return "docs/" + name


def comments(path, text):
    """A source file's comments, their lines joined by spaces."""
    marker = "//" if path.endswith((".h", ".cc")) else "#"
    return " ".join(line.split(marker, 1)[1].strip() for line in text.splitlines() if marker in line)


def check_sections(repo, doc, text, flat=None):
    problems = []
    flat = prose(text) if flat is None else flat
    cache = {}

    def heads(path):
        if path not in cache:
            cache[path] = headings(open(os.path.join(repo.root, path)).read())
        return cache[path]

    for regex, numbered in ((SECTION_REF, False), (NUMBERED_REF, True)):
        for m in regex.finditer(flat):
            path = doc_path(repo, m.group(1))
            if path not in repo.files:
                if "/" in m.group(1) or m.group(1) == "README":
                    problems.append(f"{doc}: refers to {m.group(1)}, which does not exist")
                continue
            if numbered:
                if not any(h.startswith(m.group(2) + ".") or h.startswith(m.group(2) + " ")
                           for h in heads(path)):
                    problems.append(f"{doc}: refers to {path}, section {m.group(2)}: no heading "
                                    f"numbered {m.group(2)} there")
            elif heading_key(m.group(2)) not in heads(path):
                problems.append(f'{doc}: refers to {path}, "{m.group(2)}": no such heading there')
    return problems


def section_body(text, title):
    """The lines under the heading `title` up to the next heading of the same or higher level."""
    body, level = [], None
    for _, line in prose_lines(text):
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if m and level is not None and len(m.group(1)) <= level:
            break
        if level is not None:
            body.append(line)
        elif m and heading_key(m.group(2)) == heading_key(title):
            level = len(m.group(1))
    return body if level is not None else None


def table_rows(lines):
    rows = []
    for line in lines:
        if line.startswith("|") and not re.match(r"^\|[\s|:-]+\|$", line):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows[1:]  # without the header row


def check_architecture(repo):
    problems = []
    doc = "docs/ARCHITECTURE.md"
    text = open(os.path.join(repo.root, doc)).read()
    spec = importlib.util.spec_from_file_location("check_layers",
                                                  os.path.join(repo.root, "cmake", "check_layers.py"))
    layers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layers)
    body = section_body(text, "Layers")
    if body is None:
        return [f'{doc}: no "Layers" section (cmake/check_layers.py points readers to it)']
    levels, uses = {}, {}
    for row in table_rows(body):
        if len(row) >= 3 and row[0].isdigit():
            part = row[1].strip("`").rstrip("/")
            levels.setdefault(int(row[0]), []).append(part)
            uses[part] = sorted(u.strip() for u in row[2].split(",") if u.strip() != "nothing")
    for level, parts in enumerate(layers.LEVELS):
        if sorted(levels.get(level, [])) != sorted(parts):
            problems.append(f'{doc}, "Layers": level {level} lists {sorted(levels.get(level, []))}, '
                            f"cmake/check_layers.py's LEVELS has {sorted(parts)}")
        for part in parts:
            if part in uses and uses[part] != sorted(layers.ALLOWED[part]):
                problems.append(f'{doc}, "Layers": {part} may use {uses[part]}, '
                                f"cmake/check_layers.py's ALLOWED has {sorted(layers.ALLOWED[part])}")
    if len(levels) != len(layers.LEVELS):
        problems.append(f'{doc}, "Layers": {len(levels)} levels, LEVELS has {len(layers.LEVELS)}')

    linked = set(re.findall(r"\]\(decisions/([^)#]+)\)", text))
    present = {p[len("docs/decisions/"):] for p in repo.files if p.startswith("docs/decisions/")}
    for name in sorted(present - linked):
        problems.append(f"{doc}: the decision index does not link decisions/{name}")
    return problems


def check_readme_layout(repo):
    text = open(os.path.join(repo.root, "README.md")).read()
    body = section_body(text, "Layout")
    if body is None:
        return ['README.md: no "Layout" section']
    named = set()
    for row in table_rows(body):
        named.update(m.split("/")[0] for m in re.findall(r"`([^`]+)`", row[0]))
    folders = sorted(t for t in repo.top if t in repo.dirs and not t.startswith("."))
    return [f'README.md, "Layout": the table does not name {f}/' for f in folders if f not in named]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    args = parser.parse_args()
    repo = Repository(args.root)
    problems = []
    for doc in repo.docs():
        text = open(os.path.join(repo.root, doc)).read()
        problems += check_paths(repo, doc, text) + check_sections(repo, doc, text)
    itself = os.path.relpath(os.path.abspath(__file__), os.path.abspath(repo.root))
    for source in sorted(p for p in repo.files if (p.endswith(SOURCES) or p == "dev") and p != itself):
        with open(os.path.join(repo.root, source), errors="replace") as f:
            text = f.read()
            problems += check_sections(repo, source, text, comments(source, text))
    problems += check_architecture(repo) + check_readme_layout(repo)
    if problems:
        print("docs name what does not exist:\n  " + "\n  ".join(problems) +
              "\nFix the doc (or the name it should use); see tests/docs/doc_paths_test.py for "
              "what is checked and what is skipped.", file=sys.stderr)
        return 1
    print(f"{len(repo.docs())} docs checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
