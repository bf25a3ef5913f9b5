#!/usr/bin/env bash
# Runs every benchmark against a scratch directory on the disk of the checkout (not /tmp, which
# may be memory): journal, embedded engine, server mode, OTLP and the outbox (issue 13). Usage:
# bench/run.sh BUILD_DIR [--seconds S]
# (--seconds applies to journal_bench).
set -euo pipefail
build_dir="$1"; shift
scratch="$(dirname "$build_dir")/.bench-scratch"
mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT
"$build_dir/bench/journal_bench" --dir "$scratch" "$@"
"$build_dir/bench/engine_bench" --dir "$scratch"
"$build_dir/bench/server_bench" --dir "$scratch"
"$build_dir/bench/otlp_bench" --dir "$scratch"
"$build_dir/bench/outbox_bench" --dir "$scratch"
"$build_dir/bench/server_bench" --dir "$scratch" --only w3 --transport plaintext --effects compare
# issue 18, W4 fan-out and W7 long history (embedded)
"$build_dir/bench/long_bench" --dir "$scratch"
# issue 18, W6: restart after kill -9 with 1,000 / 10,000 / 100,000 runs in flight
"$build_dir/bench/recovery_bench" --dir "$scratch"
# issue 18, W8: reads on a journal of 1,000,000 finished ten-step runs (about 12 GB of scratch;
# seeding takes 10-20 min on a shared disk)
"$build_dir/bench/large_journal_bench" --dir "$scratch"
