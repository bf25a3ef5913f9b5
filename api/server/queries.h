// Queries: what the server answers about runs, read from the journal (what is durable), never
// from the engine's memory (which may hold a batch that is not committed yet). The engine adds
// only what is not journaled: why it stopped driving a run. What a run waits on
// (engine/run_wait.h) is folded from its events; `list` folds every running run it returns.
//
// Each function fills one Response member. Errors: Errc::kNotFound naming an unknown workflow
// id; journal read errors as the journal reports them. Runs on the engine's executor.
#pragma once

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/base/error.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/engine/engine.h"
#include "reckon/engine/run_wait.h"
#include "reckon/storage/journal.h"

namespace reckon::api {

class Queries {
 public:
  Queries(storage::Journal& journal, const Engine& engine, const ContractRegistry& contracts)
      : journal_(journal), engine_(engine), contracts_(contracts) {}

  // `run_id` (here and below): one run of the workflow id; empty: the newest.
  Result<void> Describe(const std::string& workflow_id, const std::string& run_id,
                        wire::Response::Builder out);
  // Every matching run (no limit), or one page of them (limit 1..500: workflowPage).
  Result<void> List(wire::ListWorkflows::Reader filter, wire::Response::Builder out);
  Result<void> History(const std::string& workflow_id, const std::string& run_id,
                       wire::Response::Builder out);
  Result<void> Trace(const std::string& workflow_id, const std::string& run_id,
                     wire::Response::Builder out);
  Result<void> Contracts(wire::Response::Builder out);

 private:
  Result<void> Page(wire::ListWorkflows::Reader filter, wire::Response::Builder out);
  struct Loaded;
  Result<Loaded> Load(const std::string& workflow_id, const std::string& run_id);
  // The chain of runs of the workflow id (continue-as-new) into `detail`.
  Result<void> FillChain(const std::string& workflow_id, wire::WorkflowDetail::Builder detail);
  Result<RunWait> WaitOf(const storage::RunRow& row, const std::string& stuck);

  storage::Journal& journal_;
  const Engine& engine_;
  const ContractRegistry& contracts_;
};

}  // namespace reckon::api
