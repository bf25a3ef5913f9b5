#include "reckon/host/testing/engine_life.h"

#include "reckon/engine/run_state.h"

namespace reckon::testing {

EngineLife::EngineLife(storage::Journal& journal, storage::Journal& reader,
                       const WorkflowRegistry& workflows, const ToolRegistry& tools,
                       std::chrono::milliseconds wait)
    : wait_(wait), worker_(std::make_unique<LocalWorker>(workflows, tools)) {
  EngineOptions options;
  options.commit_executor = commit_thread_.get_executor();
  options.reader = &reader;
  engine = std::make_unique<Engine>(io.get_executor(), journal, tools.contracts(), *worker_,
                                    *worker_, clock_, options);
  engine->AddSink(acks_);
}

EngineLife::~EngineLife() {
  commit_thread_.join();
  engine.reset();
  worker_.reset();
}

bool EngineLife::RunUntil(const std::function<bool()>& done) {
  const auto give_up = std::chrono::steady_clock::now() + wait_;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    io.run_one_for(std::chrono::milliseconds(20));
  }
  return true;
}

void EngineLife::AckSink::OnCommitted(const RunState& run, std::span<const storage::Event>) {
  life.acknowledged[run.ref().workflow_id] = run.next_seq() - 1;
}

}  // namespace reckon::testing
