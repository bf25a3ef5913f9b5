#!/usr/bin/env bash
# The heavy tier's ASan+UBSan run (docs/TESTING.md, "ASan+UBSan"): builds everything with
# RECKON_SANITIZE=ON (gcc, AddressSanitizer and UndefinedBehaviorSanitizer) in a build
# directory of its own and runs the default tier there (ctest -LE heavy). Fails on any test
# failure, which includes every sanitizer report: the tests' processes stop at the first one.
#
#   tests/sanitize/run.sh [ctest arguments...]
#
# Environment: RECKON_SANITIZE_BUILD (default <root>/build-asan), JOBS.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${RECKON_SANITIZE_BUILD:-$root/build-asan}"
jobs="${JOBS:-$(nproc)}"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f "$build/build.ninja" ]; then
  say "configuring the ASan+UBSan build in $build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRECKON_SANITIZE=ON \
    "${launcher[@]}" >/dev/null
fi
say "building with ASan+UBSan"
cmake --build "$build" -j "$jobs"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
say "running the default tier under ASan+UBSan"
ctest --test-dir "$build" --output-on-failure -j "$jobs" -LE heavy "$@"
