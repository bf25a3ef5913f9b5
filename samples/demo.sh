#!/usr/bin/env bash
# The main demo, run by `./dev demo` after the build. Usage: samples/demo.sh BUILD_DIR
#
# 1. The refund tool's contract card and intent hash.
# 2. A payments provider that commits refunds and then drops the reply (and does not
#    deduplicate), and the refund agent on the embedded engine refunding payments through it.
# 3. The story, read back from the effect trace and the provider's ledger: attempt 1 timed out,
#    the outcome was unknown, reconciliation found the refund, exactly one refund per payment;
#    next to it, what a blind retry does to the same provider.
set -euo pipefail
build_dir="$1"; shift || true
bin="$build_dir/samples"
seed="${RECKON_DEMO_SEED:-42}"
count="${RECKON_DEMO_COUNT:-6}"
work="$(mktemp -d "${TMPDIR:-/tmp}/reckon-demo-XXXXXX")"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

start_provider() {  # start_provider NAME ARGS... ; sets $port
  local name="$1"; shift
  "$bin/payments_provider/payments-provider" --port 0 --ledger "$work/$name.db" "$@" \
    >"$work/$name.out" 2>"$work/$name.log" &
  pids+=("$!")
  for _ in $(seq 1 100); do
    if grep -q '^listening on' "$work/$name.out" 2>/dev/null; then
      port="$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/$name.out")"
      return 0
    fi
    sleep 0.05
  done
  echo "demo: $name did not start; its log:" >&2
  cat "$work/$name.log" >&2
  exit 1
}

section "1. The contract of send_refund"
"$bin/refund/refund-contract-demo" | sed -n '/Contract card: send_refund/,$p'

section "2. Refunding $count payments through a provider that drops replies (seed $seed)"
start_provider provider --seed "$seed" --drop-reply-rate 0.5 --no-dedup
provider_port="$port"
echo "payments-provider on 127.0.0.1:$provider_port: commits each refund, then drops half the replies;"
echo "it ignores Idempotency-Key, so only reconciliation can prevent a duplicate."
echo
"$bin/refund/refund-agent" --journal "$work/journal.db" \
  --provider "http://127.0.0.1:$provider_port" --count "$count" --seed "$seed" --approve-all \
  2> >(grep -E 'outcome_unknown|reconcil|committed|approval.granted|workflow.completed' >&2)

section "3. What happened, from the trace and the ledger"
start_provider scratch --seed "$seed" --no-dedup
"$bin/refund/refund-story" --trace "$work/journal.db.trace.jsonl" \
  --provider "http://127.0.0.1:$provider_port" --blind-retry-provider "http://127.0.0.1:$port"
