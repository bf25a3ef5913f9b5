// otlp_bench: the CPU that OTLP traces cost per workflow, without the engine or the network.
// It feeds the span assembler (telemetry/otlp_span_assembler.h) the committed batches of a
// server-mode ten_calls run (start, ten prepare/attempt/commit triples, the workflow task
// bookkeeping, completion: 11 batches, 11 spans) for many runs, and encodes the finished spans
// as OTLP JSON (telemetry/otlp_json.h) in batches of 256, as the exporter does. It reports the
// thread CPU per workflow of each half: the assembler runs on the engine's loop, the encoder
// on the exporter's thread. Printed beside the fsync floor of the same run (one durable
// commit), which a workflow pays 11 times.
//
//   otlp_bench --dir DIR [--workflows N] [--rounds R]
#include <CLI/CLI.hpp>

#include <time.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/fsync_floor.h"
#include "bench/machine.h"
#include "reckon/base/intent_hash.h"
#include "reckon/engine/run_state.h"
#include "reckon/telemetry/otlp_json.h"
#include "reckon/telemetry/otlp_span_assembler.h"

namespace {

using namespace reckon;
using namespace reckon::storage;

double ThreadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

// The batches one ten_calls run commits in server mode, in order.
std::vector<std::vector<Event>> TenCallsBatches(const std::string& workflow_id) {
  std::vector<std::vector<Event>> batches;
  std::int64_t seq = 0, now = 1'700'000'000'000'000;
  auto add = [&](std::vector<Event>& batch, EventBody body) {
    batch.push_back(Event{++seq, now += 40, std::move(body)});
  };
  auto task = [&](std::vector<Event>& batch) {
    add(batch, WorkflowTaskScheduled{});
    add(batch, WorkflowTaskStarted{"bench-0"});
    add(batch, WorkflowTaskCompleted{});
  };
  auto op_id = [&](int i) { return "op_" + ToHex(Sha256(workflow_id + "#" + std::to_string(i))); };
  auto prepare = [&](std::vector<Event>& batch, int i) {
    OperationPrepared p;
    p.step_id = "call#" + std::to_string(i);
    p.operation_id = op_id(i);
    p.tool = "noop";
    p.contract_hash = ToHex(Sha256("contract"));
    p.intent_hash = ToHex(Sha256(p.operation_id));
    p.side_effect = SideEffect::kReadOnly;
    p.input_json = "{}";
    add(batch, std::move(p));
    add(batch, AttemptStarted{op_id(i), 1, "bench-0", now + 5'000'000, ""});
  };
  std::vector<Event> first;
  add(first, WorkflowStarted{"ten_calls", "{}", ToHex(Sha256("ten_calls")), "operator"});
  task(first);
  prepare(first, 0);
  batches.push_back(std::move(first));
  for (int i = 1; i <= 10; ++i) {
    std::vector<Event> batch;
    add(batch, OperationCommitted{op_id(i - 1), 1, R"({"ok":true})", "", CommitSource::kAttempt});
    task(batch);
    if (i < 10) {
      prepare(batch, i);
    } else {
      add(batch, WorkflowCompleted{R"({"calls":10})"});
    }
    batches.push_back(std::move(batch));
  }
  return batches;
}

struct Round {
  double assemble_us = 0, encode_us = 0;
  std::size_t spans = 0, bytes = 0;
};

Round RunRound(int workflows) {
  Round r;
  OtlpSpanAssembler assembler;
  OtlpResource resource;
  resource.service_name = "reckon-server";
  std::vector<OtlpSpan> pending;
  auto encode = [&] {
    const double t0 = ThreadCpuUs();
    const std::string body = OtlpTracesJson(resource, pending);
    r.encode_us += ThreadCpuUs() - t0;
    r.bytes += body.size();
    r.spans += pending.size();
    pending.clear();
  };
  for (int w = 0; w < workflows; ++w) {
    const std::string id = "w3-" + std::to_string(w % 32) + "-" + std::to_string(w);
    RunState run(RunRef{id, "run-" + std::to_string(w)});
    for (const std::vector<Event>& batch : TenCallsBatches(id)) {
      if (!run.ApplyAll(batch)) {
        std::fprintf(stderr, "bad history\n");
        std::exit(1);
      }
      const double t0 = ThreadCpuUs();
      std::vector<OtlpSpan> ended = assembler.Add(run, batch);
      for (OtlpSpan& span : ended) pending.push_back(std::move(span));
      r.assemble_us += ThreadCpuUs() - t0;
      if (pending.size() >= 256) encode();
    }
  }
  if (!pending.empty()) encode();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"otlp_bench: the CPU of OTLP span assembly and JSON encoding per workflow"};
  std::string dir = std::filesystem::current_path().string();
  int workflows = 20000, rounds = 3;
  app.add_option("--dir", dir, "scratch directory for the fsync floor");
  app.add_option("--workflows", workflows, "ten_calls runs per round");
  app.add_option("--rounds", rounds, "rounds");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("%s\n", bench::DescribeMachine(dir).c_str());
  const auto floor = bench::MeasureFsyncFloor(dir, 1000);
  std::printf("floor: 4 KiB write + fdatasync: mean %.1f us, p50 %.1f us, p99 %.1f us\n",
              floor.mean_us, floor.p50_us, floor.p99_us);
  for (int round = 0; round < rounds; ++round) {
    const Round r = RunRound(workflows);
    const double assemble = r.assemble_us / workflows, encode = r.encode_us / workflows;
    std::printf("round %d: %d workflows, %zu spans, %.0f JSON bytes/workflow; CPU us/workflow: "
                "assemble %.1f (engine loop), encode %.1f (exporter thread), total %.1f "
                "(= %.3f x fsync floor)\n",
                round + 1, workflows, r.spans, static_cast<double>(r.bytes) / workflows, assemble,
                encode, assemble + encode, (assemble + encode) / floor.mean_us);
  }
  return 0;
}
