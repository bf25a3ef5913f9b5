#!/usr/bin/env python3
"""The layer check (cmake/check_layers.py) names what runs against the layers.

Copies the product's folders and CMake files into a temporary directory, checks that the copy
passes, then plants two includes and one link that run upward and checks that the checker
fails and names each of the three (file, what it uses, and the rule).
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKER = os.path.join(ROOT, "cmake", "check_layers.py")
FOLDERS = ["base", "auth", "storage", "contract", "plan", "outbox", "engine", "telemetry",
           "protocol", "worker", "host", "tools", "testkit", "api"]


def run(root):
    done = subprocess.run([sys.executable, CHECKER, "--root", root], capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def plant(path, old, new):
    text = open(path).read()
    assert old in text, f"{path} no longer holds {old!r}: update the test's plant"
    open(path, "w").write(text.replace(old, new, 1))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for folder in FOLDERS:
            shutil.copytree(os.path.join(ROOT, folder), os.path.join(tmp, folder),
                            ignore=shutil.ignore_patterns("*.js", "*.css", "*.html", "*.json"))
        code, out = run(tmp)
        if code != 0:
            print("the unchanged copy fails the check:\n" + out)
            return 1

        # Two includes that run upward: the engine reaching for the host, storage for the engine.
        plant(os.path.join(tmp, "engine", "decider.cc"), '#include "reckon/engine/decider.h"\n',
              '#include "reckon/engine/decider.h"\n#include "reckon/host/embedded_host.h"\n')
        plant(os.path.join(tmp, "storage", "event.h"), "#pragma once\n",
              '#pragma once\n#include "reckon/engine/engine.h"\n')
        # One link that runs upward: the SDK linking the SQLite backend.
        plant(os.path.join(tmp, "worker", "CMakeLists.txt"),
              "target_link_libraries(reckon_worker PUBLIC reckon::engine reckon::plan)",
              "target_link_libraries(reckon_worker PUBLIC reckon::engine reckon::plan reckon::host)")

        code, out = run(tmp)
        expected = [
            "engine/decider.cc: includes host/embedded_host.h: engine (level 2) may depend only on",
            "storage/event.h: includes engine/engine.h: storage (level 1) may depend only on",
            "worker/CMakeLists.txt: reckon_worker links reckon::host (host): worker (level 4) may "
            "depend only on",
        ]
        missing = [line for line in expected if line not in out]
        if code == 0 or missing:
            print(f"exit {code}; not named: {missing}\noutput:\n{out}")
            return 1
        print("the three planted violations are named:\n" + out)
        return 0


if __name__ == "__main__":
    sys.exit(main())
