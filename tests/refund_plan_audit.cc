// AuditRefundPlanJournal (tests/refund_crash_audit.h): the refund audit for one agent plan run.
#include <boost/json.hpp>

#include <map>
#include <set>

#include "reckon/engine/operation_state.h"
#include "tests/refund_crash_audit.h"

namespace reckon::testing {

Result<RefundAudit> AuditRefundPlanJournal(const std::string& journal_path,
                                           const std::string& plan_id, int refund_steps,
                                           const std::vector<LedgerRefund>& ledger) {
  RECKON_TRY(auto journal, OpenForAudit(journal_path));
  RefundAudit audit;
  std::vector<std::string>& bad = audit.violations;
  RefundFigures& figures = audit.figures;
  figures.refunds = static_cast<int>(ledger.size());
  RECKON_TRY(CheckJournalFiles(*journal, journal_path, bad));

  std::map<std::string, std::vector<const LedgerRefund*>> by_key, by_payment;
  for (const LedgerRefund& refund : ledger) {
    by_key[refund.idempotency_key].push_back(&refund);
    by_payment[refund.payment_id].push_back(&refund);
  }
  RECKON_TRY(std::vector<storage::RunRow> runs, journal->ListRuns());
  figures.runs = static_cast<int>(runs.size());
  if (runs.size() != 1 || runs[0].ref.workflow_id != plan_id) {
    bad.push_back("expected one run, of plan " + plan_id + "; the journal has " +
                  std::to_string(runs.size()));
    return audit;
  }
  const storage::RunRow& run = runs[0];
  ++figures.run_status[std::string(storage::RunStatusName(run.status))];
  if (run.status != storage::RunStatus::kCompleted) {
    bad.push_back(plan_id + " is " + std::string(storage::RunStatusName(run.status)) +
                  ", not completed");
  }
  RECKON_TRY(std::vector<storage::Event> events, journal->ReadEvents(run.ref));
  std::map<std::string, std::string> committed_ref_in_events;
  CountPathEvents(events, figures, committed_ref_in_events);

  const std::string committed(OperationStateName(OperationState::kCommitted));
  RECKON_TRY(std::vector<storage::OperationRow> operations, journal->ListOperations(run.run_pk));
  std::set<std::string> send_ops;
  for (const storage::OperationRow& op : operations) {
    const std::string what = plan_id + " step " + op.step_id + " " + op.tool + " " +
                             op.operation_id + " [" + op.state + "]";
    auto keyed = by_key.find(op.operation_id);
    const std::size_t with_key = keyed == by_key.end() ? 0 : keyed->second.size();
    if (op.tool != "send_refund") {
      if (with_key != 0) bad.push_back(what + ": the ledger has refunds with its key");
      continue;
    }
    send_ops.insert(op.operation_id);
    if (op.state != committed) {
      ++figures.send_refund_not_committed;
      bad.push_back(what + ": not committed (" + std::to_string(with_key) +
                    " refund(s) with its key)");
      continue;
    }
    ++figures.send_refund_committed;
    if (committed_ref_in_events[op.operation_id] != op.provider_ref) {
      bad.push_back(what + ": the row's provider_ref '" + op.provider_ref +
                    "' is not its OperationCommitted event's");
    }
    if (with_key != 1) {
      bad.push_back(what + ": " + std::to_string(with_key) + " refunds carry its key");
      continue;
    }
    const LedgerRefund& refund = *keyed->second.front();
    if (refund.refund_id != op.provider_ref) {
      bad.push_back(what + ": provider_ref '" + op.provider_ref + "' but the refund with its key is " +
                    refund.refund_id);
    }
    if (by_payment[refund.payment_id].size() != 1) {
      bad.push_back(what + ": " + std::to_string(by_payment[refund.payment_id].size()) +
                    " refunds of " + refund.payment_id + " in the ledger");
    }
  }
  if (static_cast<int>(send_ops.size()) != refund_steps) {
    bad.push_back(plan_id + " has " + std::to_string(send_ops.size()) +
                  " send_refund operations, the plan " + std::to_string(refund_steps));
  }
  for (const LedgerRefund& refund : ledger) {
    if (!send_ops.contains(refund.idempotency_key)) {
      bad.push_back("ledger refund " + refund.refund_id + " of " + refund.payment_id +
                    " has key '" + refund.idempotency_key + "', no send_refund operation's");
    }
  }
  return audit;
}

}  // namespace reckon::testing
