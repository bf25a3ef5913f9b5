#!/usr/bin/env bash
# The outbox demo, run by `./dev demo outbox` after the build. Usage: samples/outbox_demo.sh BUILD_DIR
#
# Agent plans refund a payment and then publish "refunds.sent" through the transactional
# outbox. A reckon server delivers the messages to NATS JetStream, and a consumer
# (samples/outbox_consumer) records each message once in its own SQLite database. In the
# middle of the run the broker is SIGKILLed: steps keep committing, their messages wait in the
# outbox, and the dispatcher retries. When the broker restarts, every message is delivered,
# and the consumer's count matches the outbox exactly.
set -euo pipefail
build_dir="$(cd "$1" && pwd)"; shift || true
count="${RECKON_DEMO_COUNT:-12}"
reckon="$build_dir/api/reckon"
bin="$build_dir/samples"
consumer="$bin/outbox_consumer/reckon-outbox-consumer"
work="$(mktemp -d "${TMPDIR:-/tmp}/reckon-outbox-demo-XXXXXX")"
pids=()
nats_pid=""
cleanup() {
  for pid in "${pids[@]}" $nats_pid; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${RECKON_DEMO_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
fail() { echo "demo: $*" >&2; for log in "$work"/*.log; do echo "--- $log" >&2; tail -5 "$log" >&2; done; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() {  # wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds
  local seconds="$1" what="$2"; shift 2
  for _ in $(seq 1 $((seconds * 10))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  fail "$what did not happen within ${seconds}s"
}

nats_port="$(free_port)"
nats_url="nats://127.0.0.1:$nats_port"
start_broker() {
  nats-server -js -sd "$work/jetstream" -a 127.0.0.1 -p "$nats_port" >>"$work/nats.log" 2>&1 &
  nats_pid="$!"
  wait_for 10 "nats-server starting" bash -c "exec 3<>/dev/tcp/127.0.0.1/$nats_port"
}

section "1. A broker, a server that delivers the outbox to it, two workers and a consumer"
start_broker
"$reckon" outbox stream REFUNDS --nats-url "$nats_url" --subjects 'refunds.>' \
  --duplicate-window-ms 120000
"$bin/payments_provider/payments-provider" --port 0 --ledger "$work/ledger.db" --seed 7 \
  --drop-reply-rate 0.3 >"$work/provider.out" 2>"$work/provider.log" &
pids+=("$!")
wait_for 10 "payments-provider starting" grep -q '^listening on' "$work/provider.out"
provider_url="http://$(sed -n 's/^listening on \(.*\)$/\1/p' "$work/provider.out")"
"$reckon" server --journal "$work/server.db" --listen 127.0.0.1:0 --port-file "$work/port" \
  --insecure-dev --quiet --nats-url "$nats_url" 2>"$work/server.log" &
pids+=("$!")
wait_for 10 "reckon server starting" test -s "$work/port"
server="127.0.0.1:$(cat "$work/port")"
for id in w1 w2; do
  "$bin/refund/refund-worker" --server "$server" --provider "$provider_url" --id "$id" \
    2>"$work/$id.log" &
  pids+=("$!")
done
"$consumer" --nats-url "$nats_url" --stream REFUNDS --subject 'refunds.>' --durable ledger-team \
  --db "$work/consumer.db" 2>"$work/consumer.log" &
pids+=("$!")
echo "nats-server (JetStream) on $nats_url; reckon server on $server (--nats-url);"
echo "refund-workers w1 and w2; payments-provider drops 30% of replies; consumer: ledger-team"

plan_file() {  # plan_file N: refund 500 cents of pay-N, then publish what was refunded
  cat >"$work/plan-$1.json" <<EOF
{"plan_id": "refund-pay-$1-notify",
 "steps": [
   {"id": "refund", "tool": "send_refund",
    "input": {"payment_id": "pay-$1", "amount_cents": 500, "reason": "late delivery"}},
   {"id": "notify", "depends_on": ["refund"],
    "publish": {"subject": "refunds.sent",
                "payload": {"payment_id": "pay-$1",
                            "refund_id": {"\$ref": "steps.refund.output.refund_id"}}}}]}
EOF
  echo "$work/plan-$1.json"
}
run_plan() {
  local file; file="$(plan_file "$1")"
  # Workers may still be registering: the server refuses a plan no worker can run yet.
  for _ in $(seq 1 50); do
    if "$reckon" plan run "$file" --server "$server" --no-wait >>"$work/plans.out" 2>&1; then return 0; fi
    sleep 0.2
  done
  fail "plan $1 was never accepted"
}
pending() { "$reckon" outbox list --pending "$work/server.db" | grep -c '^msg_' || true; }
messages() { "$reckon" outbox list "$work/server.db" | grep -c '^msg_' || true; }
running() { "$reckon" list --status running --server "$server" --json | grep -o "\"workflow_id\"" | wc -l; }
report() { "$consumer" --report --db "$work/consumer.db"; }
processed() { report | sed -n 's/^processed //p'; }
# Predicates for wait_for (evaluated on every poll).
none_running() { [ "$(running)" -eq 0 ]; }
none_pending() { [ "$(pending)" -eq 0 ]; }
all_processed() { [ "$(processed)" -ge "$(messages)" ]; }

half=$((count / 2))
section "2. Plans 1-$half: refund, then publish refunds.sent"
for i in $(seq 1 "$half"); do run_plan "$i"; done
wait_for 60 "plans 1-$half finishing" none_running
wait_for 30 "the first messages reaching the consumer" all_processed
echo "$(messages) messages published and acknowledged; the consumer processed $(processed)"

section "3. The broker is SIGKILLed; plans $((half + 1))-$count run anyway"
kill -9 "$nats_pid"; wait "$nats_pid" 2>/dev/null || true
echo "nats-server (pid $nats_pid) killed"
for i in $(seq $((half + 1)) "$count"); do run_plan "$i"; done
wait_for 60 "plans $((half + 1))-$count finishing" none_running
echo "every plan finished; the broker stays down 8 s more while the dispatcher retries"
sleep 8
echo "$(pending) of $(messages) messages wait in the outbox; the consumer has processed $(processed):"
"$reckon" outbox list --pending "$work/server.db" | head -3 | cut -c1-160

section "4. The broker restarts (same store); the dispatcher delivers what waited"
start_broker
wait_for 60 "the outbox draining" none_pending
wait_for 60 "the consumer catching up" all_processed
sleep 1

section "5. Counted"
total="$(messages)"
got="$(processed)"
retried="$("$reckon" outbox list --json "$work/server.db" | grep -c '"attempts":\([2-9]\|[1-9][0-9]\)' || true)"
completed="$("$reckon" list --status completed --server "$server" --json | grep -o "\"workflow_id\"" | wc -l)"
echo "plans completed:              $completed of $count"
echo "messages in the outbox:       $total (one per committed refund)"
echo "messages delivered on a retry: $retried (the broker was down when they committed)"
report | sed 's/^/consumer /'
refunds="$(curl -s "$provider_url/refunds" | grep -o '"refund_id"' | wc -l || true)"
echo "refunds in the provider's ledger: $refunds"
if [ "$got" = "$total" ] && [ "$total" = "$completed" ]; then
  echo "exact: every committed step's message was processed once"
else
  fail "the consumer processed $got of $total messages"
fi
