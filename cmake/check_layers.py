#!/usr/bin/env python3
"""Fails when an #include or a link runs against the layers (docs/ARCHITECTURE.md, "Layers").

Run as: python3 cmake/check_layers.py [--root DIR]. Built as part of every build (target
`layers`) and registered as the ctest test `layers`; tests/layers/planted_test.py plants bad
includes and a bad link in a copy of the tree and checks that each is named.

Folders are layers. Each part (a product folder) sits on one level and may use only the parts
listed for it in ALLOWED, which are exactly what its code uses today, each on a lower level:
a new arrow is a decision, made here, and an arrow up cannot be written at all.

Includes: product headers are included with the `reckon/` prefix; a part may include itself
and its allowed parts. Test files (*_test.cc) and test support (a `testing/` folder) may also
include tests/support, other parts' testing/ folders and the public test library (testkit/).
No product file includes samples/, bench/ or tests/ (but test files and testing/ folders may
use tests/support).

Links: every library of the product (reckon_library without TESTING) may link only libraries
of its own part and of its allowed parts. Libraries marked TESTING (test support) are test
code and are not checked; neither are programs and tests.
"""
import argparse
import os
import re
import sys

# Levels, lowest first. A part may use parts of lower levels only.
LEVELS = [
    ["base"],
    ["auth", "storage", "contract"],
    ["plan", "outbox", "engine"],
    ["telemetry", "protocol"],
    ["worker"],
    ["host", "tools"],
    ["testkit"],
    ["api/server"],
    ["api/cli"],
]

# What each part uses: its includes and its links.
ALLOWED = {
    "base": [],
    "auth": ["base"],
    "storage": ["base"],
    "contract": ["base"],
    "plan": ["base", "contract"],
    "outbox": ["base", "storage"],
    "engine": ["base", "storage", "contract"],
    "telemetry": ["base", "storage", "contract", "engine"],
    "protocol": ["base", "auth", "storage", "contract", "engine"],
    "worker": ["base", "storage", "contract", "plan", "engine", "protocol"],
    "host": ["base", "storage", "outbox", "contract", "plan", "engine", "telemetry", "worker"],
    "tools": ["base", "contract", "plan", "engine", "worker"],
    "testkit": ["base", "storage", "contract", "engine", "worker", "host"],
    "api/server": ["base", "auth", "storage", "outbox", "contract", "plan", "engine",
                   "telemetry", "protocol", "worker", "host"],
    "api/cli": ["base", "auth", "storage", "outbox", "contract", "plan", "engine", "telemetry",
                "protocol", "worker", "host", "tools", "api/server"],
}

PARTS = [part for level in LEVELS for part in level]
LEVEL_OF = {part: n for n, level in enumerate(LEVELS) for part in level}


def part_of(path):
    """The part a repository path belongs to ("api/server/x.h" -> "api/server"), or None."""
    found = None
    for part in PARTS:
        if path.startswith(part + "/") and (found is None or len(part) > len(found)):
            found = part
    return found


def check_table():
    problems = []
    for part in PARTS:
        for used in ALLOWED[part]:
            if LEVEL_OF[used] >= LEVEL_OF[part]:
                problems.append(f"cmake/check_layers.py: {part} (level {LEVEL_OF[part]}) lists "
                                f"{used} (level {LEVEL_OF[used]}): a part may use lower levels only")
    return problems


def product_files(root):
    for part in PARTS:
        for directory, _, files in os.walk(os.path.join(root, part)):
            for name in sorted(files):
                if name.endswith((".h", ".cc")):
                    path = os.path.relpath(os.path.join(directory, name), root)
                    if part_of(path) == part:
                        yield part, path


def check_includes(root):
    problems = []
    include = re.compile(r'^#include "([^"]+)"')
    for part, path in product_files(root):
        is_test = path.endswith("_test.cc") or "/testing/" in path
        may = ", ".join(ALLOWED[part]) or "nothing"
        with open(os.path.join(root, path), errors="replace") as f:
            for line in f:
                m = include.match(line)
                if not m:
                    continue
                target = m.group(1)
                if part_of(target):
                    problems.append(f'{path}: includes {target}: write "reckon/{target}"')
                    continue
                target = target.removeprefix("reckon/")
                if re.match(r"^(samples|bench)/", target):
                    problems.append(f"{path}: includes {target}: the product never depends on "
                                    f"{target.split('/')[0]}/")
                    continue
                if is_test and (target.startswith("tests/support/") or "/testing/" in target or
                                target.startswith("testkit/")):
                    continue
                if target.startswith("tests/"):
                    problems.append(f"{path}: includes {target}: only tests and testing/ may use tests/")
                    continue
                used = part_of(target)
                if used is None or used == part:
                    continue  # generated headers (*.capnp.h), the part itself
                if used not in ALLOWED[part]:
                    problems.append(f"{path}: includes {target}: {part} (level {LEVEL_OF[part]}) "
                                    f"may depend only on: {may}")
    return problems


def cmake_files(root):
    for part in PARTS:
        top = os.path.join(root, part)
        for directory, _, files in os.walk(top):
            if "CMakeLists.txt" in files:
                yield os.path.join(directory, "CMakeLists.txt")
    api = os.path.join(root, "api", "CMakeLists.txt")
    if os.path.exists(api):
        yield api


def strip_comments(text):
    return "\n".join(line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
                     for line in text.splitlines())


def check_links(root):
    """Maps each product library to its part, then checks what it links."""
    targets = {}  # target name -> (part, cmake file, checked?)
    links = []  # (target, cmake file, [dependencies])
    library = re.compile(r"\breckon_(?:capnp_)?library\(\s*([A-Za-z0-9_]+)([^)]*)\)", re.S)
    link = re.compile(r"\btarget_link_libraries\(\s*([A-Za-z0-9_]+)([^)]*)\)", re.S)
    seen = set()
    for cmake in cmake_files(root):
        if cmake in seen:
            continue
        seen.add(cmake)
        text = strip_comments(open(cmake).read())
        directory = os.path.relpath(os.path.dirname(cmake), root)
        for m in library.finditer(text):
            words = m.group(2).split()
            sources = [w for w in words if w.endswith((".cc", ".capnp"))]
            first = os.path.normpath(os.path.join(directory, sources[0])) if sources else directory + "/x"
            part = part_of(first)
            if part:
                targets[m.group(1)] = (part, os.path.relpath(cmake, root), "TESTING" not in words)
        for m in link.finditer(text):
            deps = re.findall(r"\breckon(?:::|_)([A-Za-z0-9_]+)", m.group(2))
            links.append((m.group(1), os.path.relpath(cmake, root), deps))
    problems = []
    for target, cmake, deps in links:
        if target not in targets or not targets[target][2]:
            continue
        part = targets[target][0]
        for dep in deps:
            dep_target = "reckon_" + dep
            if dep_target not in targets:
                continue  # not a library of the product (tests/support's reckon::testing, ...)
            used = targets[dep_target][0]
            if used != part and used not in ALLOWED[part]:
                may = ", ".join(ALLOWED[part]) or "nothing"
                problems.append(f"{cmake}: {target} links reckon::{dep} ({used}): {part} "
                                f"(level {LEVEL_OF[part]}) may depend only on: {may}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = parser.parse_args()
    problems = check_table() + check_includes(args.root) + check_links(args.root)
    if problems:
        print("against the layers (docs/ARCHITECTURE.md, \"Layers\"):\n  " + "\n  ".join(problems) +
              "\nMove the code to the part that may own it, or invert the dependency through an "
              "interface.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
