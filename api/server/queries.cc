#include "reckon/api/server/queries.h"

#include <boost/json/serialize.hpp>

#include <charconv>

#include "reckon/protocol/wire_convert.h"
#include "reckon/contract/contract_card.h"
#include "reckon/contract/contract_json.h"
#include "reckon/telemetry/trace_lines.h"
#include "reckon/engine/operation_state.h"

namespace reckon::api {

struct Queries::Loaded {
  storage::RunRow row;
  std::vector<storage::Event> events;
  RunState state;
};

namespace {

void FillSummary(const storage::RunRow& row, const std::vector<storage::OperationRow>& ops,
                 const std::string& stuck, const RunWait& wait,
                 wire::WorkflowSummary::Builder out) {
  out.setWorkflowId(Text(row.ref.workflow_id));
  out.setRunId(Text(row.ref.run_id));
  out.setWorkflowType(Text(row.workflow_type));
  out.setStatus(Name(storage::RunStatusName(row.status)));
  out.setStuckReason(Text(stuck));
  out.setWaitsOn(Name(WaitKindName(wait.kind)));
  out.setWaitDetail(Text(wait.detail));
  out.setWaitUntilUs(wait.until_us);
  out.setCreatedAtUs(row.created_at_us);
  out.setUpdatedAtUs(row.updated_at_us);
  std::uint32_t committed = 0, waiting = 0;
  for (const auto& op : ops) {
    if (op.state == "committed") ++committed;
    if (op.state == "awaiting_approval" || op.state == "needs_human") ++waiting;
  }
  out.setOperations(static_cast<std::uint32_t>(ops.size()));
  out.setCommittedOperations(committed);
  out.setWaitingForPerson(waiting);
}

std::string StuckReason(const Engine& engine, const std::string& workflow_id) {
  return engine.StuckReason(workflow_id);
}

}  // namespace

// What the run waits on as the journal shows it (no batch in hand is durable), with the
// engine's stuck reason. A finished run waits on nothing, without reading its events.
Result<RunWait> Queries::WaitOf(const storage::RunRow& row, const std::string& stuck) {
  if (storage::IsTerminal(row.status)) return RunWait{WaitKind::kNothing, ""};
  RECKON_TRY(auto events, journal_.ReadEvents(row.ref));
  RunState state(row.ref);
  RECKON_TRY(state.ApplyAll(events));
  return reckon::WaitOf(state, stuck, false);
}

Result<Queries::Loaded> Queries::Load(const std::string& workflow_id,
                                      const std::string& run_id) {
  if (workflow_id.empty()) return Err(Errc::kInvalidArgument, "workflowId is empty");
  std::optional<storage::RunRow> row;
  if (run_id.empty()) {
    RECKON_TRY(row, journal_.FindLatestRun(workflow_id));
  } else {
    RECKON_TRY(row, journal_.FindRun(storage::RunRef{workflow_id, run_id}));
    if (!row) {
      return Err(Errc::kNotFound, "workflow '" + workflow_id + "' has no run '" + run_id +
                                      "' in this journal; `reckon show " + workflow_id +
                                      "` lists its runs");
    }
  }
  if (!row) {
    return Err(Errc::kNotFound, "no workflow '" + workflow_id +
                                    "' in this journal; `reckon list` shows the ids it has");
  }
  RECKON_TRY(auto events, journal_.ReadEvents(row->ref));
  RunState state(row->ref);
  RECKON_TRY(state.ApplyAll(events));
  return Loaded{std::move(*row), std::move(events), std::move(state)};
}

// The runs of the workflow id, newest first by keyset pages of the id-prefix index; ids that
// only share the prefix are skipped. At most 20 pages are read, so `earlierRuns` is a lower
// bound for a workflow id that prefixes thousands of others.
Result<void> Queries::FillChain(const std::string& workflow_id,
                                wire::WorkflowDetail::Builder detail) {
  constexpr std::size_t kShown = 50;
  std::vector<storage::RunRow> chain;
  std::uint32_t earlier = 0;
  storage::RunQuery query;
  query.id_prefix = workflow_id;
  query.limit = 200;
  for (int pages = 0; pages < 20; ++pages) {
    RECKON_TRY(auto page, journal_.QueryRuns(query));
    for (auto& row : page) {
      if (row.ref.workflow_id != workflow_id) continue;
      if (chain.size() < kShown) {
        chain.push_back(std::move(row));
      } else {
        ++earlier;
      }
    }
    if (page.size() < query.limit) break;
    query.before_run_pk = page.back().run_pk;
  }
  auto list = detail.initRuns(static_cast<unsigned>(chain.size()));
  for (unsigned i = 0; i < chain.size(); ++i) {
    const storage::RunRow& row = chain[chain.size() - 1 - i];
    list[i].setRunId(Text(row.ref.run_id));
    list[i].setStatus(Name(storage::RunStatusName(row.status)));
    list[i].setCreatedAtUs(row.created_at_us);
    list[i].setUpdatedAtUs(row.updated_at_us);
  }
  detail.setEarlierRuns(earlier);
  return Ok();
}

Result<void> Queries::Describe(const std::string& workflow_id, const std::string& run_id,
                               wire::Response::Builder out) {
  RECKON_TRY(Loaded run, Load(workflow_id, run_id));
  RECKON_TRY(auto ops, journal_.ListOperations(run.row.run_pk));
  auto detail = out.initResult().initWorkflow();
  // Only an open run (the newest) can be stuck; an earlier run of a chain never is.
  const std::string stuck = run.state.terminal() ? "" : StuckReason(engine_, workflow_id);
  FillSummary(run.row, ops, stuck, reckon::WaitOf(run.state, stuck, false), detail.initSummary());
  detail.setInputJson(Text(run.state.input_json()));
  detail.setResultJson(Text(run.state.result_json()));
  detail.setStartedBy(Text(run.state.started_by()));
  RECKON_TRY(FillChain(workflow_id, detail));
  if (!run.state.parent_workflow_id().empty()) {
    auto parent = detail.initParent();
    parent.setWorkflowId(Text(run.state.parent_workflow_id()));
    parent.setRunId(Text(run.state.parent_run_id()));
    detail.setParentClosePolicy(Text(run.state.parent_close_policy()));
  }
  detail.setCancelRequested(run.state.cancel_requested() && !run.state.terminal());
  detail.setCancelReason(Text(run.state.cancel_reason()));
  auto children = detail.initChildren(static_cast<unsigned>(run.state.children().size()));
  unsigned k = 0;
  for (const auto& [step, child] : run.state.children()) {
    auto c = children[k++];
    c.setStepId(Text(step));
    c.setWorkflowId(Text(child.child_workflow_id));
    c.setWorkflowType(Text(child.workflow_type));
    c.setPolicy(Name(ParentClosePolicyName(child.policy)));
    c.setStatus(child.closed ? Text(child.status) : kj::StringPtr("running"));
  }
  // Journal order of the steps (the map is by operation id).
  std::vector<const OperationRecord*> views;
  for (const auto& [id, op] : run.state.operations()) views.push_back(&op);
  std::vector<const OperationRecord*> ordered;
  for (const storage::Event& event : run.events) {
    if (const auto* prepared = std::get_if<storage::OperationPrepared>(&event.body)) {
      for (const OperationRecord* view : views) {
        if (view->operation_id == prepared->operation_id) ordered.push_back(view);
      }
    }
  }
  auto list = detail.initOperations(static_cast<unsigned>(ordered.size()));
  for (unsigned i = 0; i < ordered.size(); ++i) {
    const OperationRecord& op = *ordered[i];
    auto o = list[i];
    o.setOperationId(Text(op.operation_id));
    o.setStepId(Text(op.step_id));
    o.setTool(Text(op.tool));
    o.setSideEffect(Name(SideEffectName(op.side_effect)));
    const auto state = OperationStateName(op.state);
    o.setState(kj::StringPtr(state.data(), state.size()));
    o.setAttempt(op.attempt);
    o.setIntentHash(Text(op.intent_hash));
    o.setContractHash(Text(op.contract_hash));
    o.setProviderRef(Text(op.provider_ref));
    if (op.state == OperationState::kAwaitingApproval) o.setApprovalId(Text(op.approval_id));
    o.setFailureCode(Text(op.failure_code));
    o.setFailureMessage(Text(op.failure_message));
    o.setRedactedInputJson(Text(op.redacted_input_json));
    if (op.state == OperationState::kAwaitingApproval) o.setApprovalDeadlineUs(op.due_at_us);
  }
  return Ok();
}

Result<void> Queries::List(wire::ListWorkflows::Reader filter, wire::Response::Builder out) {
  if (filter.getLimit() > 0) return Page(filter, out);
  std::optional<storage::RunStatus> status;
  if (filter.getStatus().size() > 0) {
    RECKON_TRY(status, storage::ParseRunStatus(Str(filter.getStatus())));
  }
  const std::string tool = Str(filter.getTool());
  RECKON_TRY(auto runs, journal_.ListRuns(status));
  struct Row {
    const storage::RunRow* run;
    std::vector<storage::OperationRow> ops;
  };
  std::vector<Row> rows;
  for (const auto& run : runs) {
    RECKON_TRY(auto ops, journal_.ListOperations(run.run_pk));
    if (!tool.empty() &&
        std::none_of(ops.begin(), ops.end(), [&](const auto& op) { return op.tool == tool; })) {
      continue;
    }
    if (filter.getNeedsHuman() &&
        std::none_of(ops.begin(), ops.end(), [](const auto& op) {
          return op.state == "awaiting_approval" || op.state == "needs_human";
        })) {
      continue;
    }
    rows.push_back(Row{&run, std::move(ops)});
  }
  auto list = out.initResult().initWorkflows(static_cast<unsigned>(rows.size()));
  for (unsigned i = 0; i < rows.size(); ++i) {
    const std::string stuck = StuckReason(engine_, rows[i].run->ref.workflow_id);
    RECKON_TRY(RunWait wait, WaitOf(*rows[i].run, stuck));
    FillSummary(*rows[i].run, rows[i].ops, stuck, wait, list[i]);
  }
  return Ok();
}

Result<void> Queries::Page(wire::ListWorkflows::Reader filter, wire::Response::Builder out) {
  constexpr std::uint32_t kMaxLimit = 500;
  if (filter.getLimit() > kMaxLimit) {
    return Err(Errc::kInvalidArgument, "limit " + std::to_string(filter.getLimit()) +
                                           " is over " + std::to_string(kMaxLimit) +
                                           "; page with the cursor instead");
  }
  storage::RunQuery query;
  if (filter.getStatus().size() > 0) {
    RECKON_TRY(query.status, storage::ParseRunStatus(Str(filter.getStatus())));
  }
  query.workflow_type = Str(filter.getWorkflowType());
  query.id_prefix = Str(filter.getIdPrefix());
  query.tool = Str(filter.getTool());
  query.needs_human = filter.getNeedsHuman();
  query.limit = filter.getLimit();
  const std::string cursor = Str(filter.getCursor());
  if (!cursor.empty()) {
    std::int64_t before = 0;
    const auto [end, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), before);
    if (ec != std::errc() || end != cursor.data() + cursor.size() || before <= 0) {
      return Err(Errc::kInvalidArgument,
                 "cursor '" + cursor + "' is not one this server gave; start from the first page");
    }
    query.before_run_pk = before;
  }
  RECKON_TRY(auto runs, journal_.QueryRuns(query));
  auto page = out.initResult().initWorkflowPage();
  auto list = page.initWorkflows(static_cast<unsigned>(runs.size()));
  for (unsigned i = 0; i < runs.size(); ++i) {
    RECKON_TRY(auto ops, journal_.ListOperations(runs[i].run_pk));
    const std::string stuck = StuckReason(engine_, runs[i].ref.workflow_id);
    RECKON_TRY(RunWait wait, WaitOf(runs[i], stuck));
    FillSummary(runs[i], ops, stuck, wait, list[i]);
  }
  if (runs.size() == query.limit) page.setNextCursor(Text(std::to_string(runs.back().run_pk)));
  return Ok();
}

Result<void> Queries::History(const std::string& workflow_id, const std::string& run_id,
                              wire::Response::Builder out) {
  RECKON_TRY(Loaded run, Load(workflow_id, run_id));
  EventsToWire(run.events, out.initResult().initHistory(static_cast<unsigned>(run.events.size())));
  return Ok();
}

Result<void> Queries::Trace(const std::string& workflow_id, const std::string& run_id,
                            wire::Response::Builder out) {
  RECKON_TRY(Loaded run, Load(workflow_id, run_id));
  std::vector<std::string> lines;
  for (const storage::Event& event : run.events) {
    for (const TraceLine& line : TraceLinesFor(run.state, std::span(&event, 1))) {
      lines.push_back(TraceLineJson(event, line));
    }
  }
  auto list = out.initResult().initTrace(static_cast<unsigned>(lines.size()));
  for (unsigned i = 0; i < lines.size(); ++i) list.set(i, Text(lines[i]));
  return Ok();
}

Result<void> Queries::Contracts(wire::Response::Builder out) {
  auto all = contracts_.All();
  auto list = out.initResult().initContracts(static_cast<unsigned>(all.size()));
  for (unsigned i = 0; i < all.size(); ++i) {
    const ToolContract& contract = *all[i];
    const RegisteredContract* registered = contracts_.FindRegistered(contract.name);
    auto c = list[i];
    c.setName(Text(contract.name));
    c.setHash(Text(registered->hash()));
    const auto side_effect = SideEffectName(contract.side_effect);
    c.setSideEffect(kj::StringPtr(side_effect.data(), side_effect.size()));
    const std::string json = boost::json::serialize(ContractToJson(contract));
    c.setContractJson(Text(json));
    const std::string card = RenderContractCard(contract);
    c.setCard(Text(card));
  }
  return Ok();
}

}  // namespace reckon::api
