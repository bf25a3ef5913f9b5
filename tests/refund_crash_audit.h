// The checks of the refund crash loop (tests/refund_crash_test.cc): the provider's ledger is
// the ground truth of what happened in the world, the journal is what Reckon believes, and
// the two must agree once every workflow is terminal.
//
// FetchRefunds reads the ledger over HTTP (GET /refunds, a blocking request on a raw socket).
// AuditRefundJournal opens the journal (nobody else may be writing it) and returns every
// invariant it finds broken, each as one line naming the workflow, the operation and the
// evidence, together with figures that show which paths the run exercised.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::testing {

struct LedgerRefund {
  std::string refund_id;
  std::string payment_id;
  std::int64_t amount_cents = 0;
  std::string idempotency_key;  // empty when the refund was created without one
};

// Every refund of the provider listening on 127.0.0.1:`port`, oldest first.
Result<std::vector<LedgerRefund>> FetchRefunds(std::uint16_t port);

// What a journal shows of the paths taken. Counts are of events unless named otherwise.
struct RefundFigures {
  int runs = 0;
  std::map<std::string, int> run_status;            // completed / failed / ... -> runs
  int send_refund_committed = 0;                     // operations
  int send_refund_not_committed = 0;                 // operations
  int outcome_unknown = 0;                           // OutcomeUnknown events
  std::map<std::string, int> unknown_reasons;  // "send_refund/reply_lost", "<tool>/<reason>"
  int reconciliations = 0;                           // ReconciliationResult events
  std::map<std::string, int> reconciliation_results;  // committed / not_found / still_unknown
  std::map<std::string, int> commit_sources;  // OperationCommitted.source of send_refund
  int refunds = 0;                            // in the ledger

  void Add(const RefundFigures& other);
  std::string ToString() const;  // one line
};

struct RefundAudit {
  RefundFigures figures;
  std::vector<std::string> violations;  // empty: every invariant holds
};

// Checks the journal at `journal_path` against `ledger`, for workflows refund-0 ..
// refund-(count-1), where refund-i refunds pay-i:
//   - PRAGMA integrity_check is "ok";
//   - each workflow has exactly one run, and it is terminal; there are no other runs;
//   - a committed send_refund has exactly one refund with its operation id as key, that is
//     the only refund of the payment, and its refund_id is the operation's provider_ref (and
//     the workflow's result's refund_id);
//   - an operation that is not committed has no refund with its key;
//   - every refund's key is a committed send_refund operation of the journal, so the number
//     of refunds equals the number of committed send_refund operations.
// An error means the journal could not be read at all.
Result<RefundAudit> AuditRefundJournal(const std::string& journal_path, int count,
                                       const std::vector<LedgerRefund>& ledger);

}  // namespace reckon::testing
