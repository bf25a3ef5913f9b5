#!/usr/bin/env bash
# The main demo, run by `./dev demo` after the build. Usage: samples/demo.sh BUILD_DIR
set -euo pipefail
build_dir="$1"; shift
exec "$build_dir/samples/refund/refund-contract-demo" "$@"
