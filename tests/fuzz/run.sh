#!/usr/bin/env bash
# The heavy tier's fuzzing (docs/TESTING.md, "Fuzzing"): builds the libFuzzer targets of
# tests/fuzz with clang-14, ASan and UBSan (RECKON_FUZZ=ON) in a build directory of their own,
# then runs each for a fixed time from a copy of its seed corpus in a scratch directory.
# Fails if any target reports a crash, a leak, undefined behaviour, a timeout or a broken
# property; the input that did it is kept in the scratch directory and named in the output.
#
#   tests/fuzz/run.sh [TARGET...]      default: every target
#
# Environment: RECKON_FUZZ_SECONDS (default 120, per target), RECKON_FUZZ_BUILD (default
# <root>/build-fuzz), RECKON_FUZZ_SCRATCH (default <build>/scratch, emptied first), JOBS.
# A finding is fixed in the product, and its input added to tests/fuzz/corpus/<target>/ so
# the default tier's replay (ctest -R fuzz_replay) keeps covering it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${RECKON_FUZZ_BUILD:-$root/build-fuzz}"
scratch="${RECKON_FUZZ_SCRATCH:-$build/scratch}"
seconds="${RECKON_FUZZ_SECONDS:-120}"
jobs="${JOBS:-$(nproc)}"
all_targets=(request_frame plan jcs event contract http_request)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f "$build/build.ninja" ]; then
  say "configuring the fuzz build (clang-14, libFuzzer, ASan, UBSan) in $build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DRECKON_FUZZ=ON \
    "${launcher[@]}" >/dev/null
fi
say "building ${targets[*]}"
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}"

rm -rf "$scratch"
mkdir -p "$scratch"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
summary="$scratch/summary.txt"
printf '%-14s %8s %8s %12s %10s %8s %8s  %s\n' target wall_s cpu_s execs exec/s corpus0 corpus1 \
  result >"$summary"
failed=()
for t in "${targets[@]}"; do
  work="$scratch/$t"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp "$root/tests/fuzz/corpus/$t/"* "$work/corpus/"
  before=$(find "$work/corpus" -type f | wc -l)
  dict=()
  case "$t" in
    plan|jcs|contract) dict=(-dict="$root/tests/fuzz/json.dict") ;;
    http_request) dict=(-dict="$root/tests/fuzz/http.dict") ;;
  esac
  say "fuzzing $t for ${seconds}s from $before seeds"
  rc=0
  /usr/bin/time -f '%e %U %S' -o "$work/time" \
    "$build/tests/fuzz/fuzz_$t" "$work/corpus" -max_total_time="$seconds" \
    -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$work/artifacts/" "${dict[@]}" >"$work/log" 2>&1 || rc=$?
  after=$(find "$work/corpus" -type f | wc -l)
  read -r wall user sys <"$work/time" || true
  cpu=$(awk -v u="${user:-0}" -v s="${sys:-0}" 'BEGIN {printf "%.1f", u + s}')
  execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$work/log" | tail -1)
  rate=$(awk '/stat::average_exec_per_sec:/ {print $2}' "$work/log" | tail -1)
  result=ok
  if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
    result="FAILED (exit $rc; inputs: $(ls "$work/artifacts" | tr '\n' ' '))"
    failed+=("$t")
    grep -m 5 -E 'ERROR|runtime error|fuzz property|==[0-9]+==' "$work/log" >&2 || true
  fi
  printf '%-14s %8s %8s %12s %10s %8s %8s  %s\n' "$t" "${wall:-?}" "$cpu" "${execs:-?}" \
    "${rate:-?}" "$before" "$after" "$result" >>"$summary"
done
cat "$summary"
if [ ${#failed[@]} -gt 0 ]; then
  say "fuzzing found problems in: ${failed[*]} (logs and inputs under $scratch)"
  exit 1
fi
say "fuzzing: no findings (logs under $scratch)"
