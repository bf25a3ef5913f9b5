// The checks of the refund crash loop (tests/refund_crash_test.cc): the provider's ledger is
// the ground truth of what happened in the world, the journal is what Reckon believes, and
// the two must agree once every workflow is terminal.
//
// FetchRefunds reads the ledger over HTTP (GET /refunds, a blocking request on a raw socket).
// AuditRefundJournal opens the journal (a SQLite path read-only, or a postgresql:// database as
// a companion connection, which takes no lock and no lease: nobody should be writing it, and
// for a cluster the servers are stopped first) and returns every invariant it finds broken,
// each as one line naming the workflow, the operation and the evidence, together with figures
// that show which paths the run exercised.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <map>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"
#include "reckon/storage/journal.h"

namespace reckon::testing {

struct LedgerRefund {
  std::string refund_id;
  std::string payment_id;
  std::int64_t amount_cents = 0;
  std::string idempotency_key;  // empty when the refund was created without one
};

// The refund workflows the crash loops start and the audit checks: refund-i refunds pay-i.
std::string RefundWorkflowId(int i);
// refund-agent's input for refund-i (samples/refund/refund_agent_main.cc): pay-i, and one of
// its four reasons, picked by (seed + i).
std::string RefundWorkflowInput(int i, std::uint64_t seed = 7);

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
  int waiting_for_person = 0;  // runs left running on an operation that needs a person

  void Add(const RefundFigures& other);
  std::string ToString() const;  // one line
};

struct RefundAudit {
  RefundFigures figures;
  std::vector<std::string> violations;  // empty: every invariant holds
};

struct RefundAuditOptions {
  // Accept a run that is still running because one of its operations waits for a person
  // (needs_human, or awaiting_approval): such a send_refund may have at most one refund with
  // its key in the ledger (what the person must settle), instead of none. Off: every run must
  // be terminal.
  bool allow_waiting_for_person = false;
};

// Checks the journal `journal` (a SQLite file's path, or a postgresql:// connection string:
// storage/backend/open_backend.h) against `ledger`, for workflows refund-0 ..
// refund-(count-1), where refund-i refunds pay-i:
//   - the backend's integrity check (Journal::IntegrityCheck: SQLite's PRAGMA integrity_check,
//     PostgreSQL's sequence and orphan-row checks) is "ok";
//   - no card token in the SQLite file or its WAL (a PostgreSQL database's files belong to its
//     server: not checked here; tests/secret_canary_test.cc covers the paths a token could take);
//   - each workflow has exactly one run, and it is terminal (or waits for a person, see
//     RefundAuditOptions); there are no other runs;
//   - a committed send_refund has exactly one refund with its operation id as key, that is
//     the only refund of the payment, and its refund_id is the operation's provider_ref (and
//     the workflow's result's refund_id);
//   - an operation that is not committed has no refund with its key (one waiting for a
//     person: at most one);
//   - every refund's key is a committed send_refund operation of the journal (or one waiting
//     for a person), so the number of refunds equals the number of those operations.
// An error means the journal could not be read at all.
Result<RefundAudit> AuditRefundJournal(const std::string& journal, int count,
                                       const std::vector<LedgerRefund>& ledger,
                                       RefundAuditOptions options = {});

// The same checks for one agent plan run (`reckon plan run`, e.g. over the tools file
// samples/refund/tools.json) whose send_refund steps each refund another payment: the run
// `plan_id` is the journal's only run and is completed; it has `refund_steps` send_refund
// operations, each committed with exactly one refund under its operation id, whose refund_id
// is its provider_ref and the only refund of its payment; the ledger holds nothing else; the
// integrity check and the card token check as above.
Result<RefundAudit> AuditRefundPlanJournal(const std::string& journal, const std::string& plan_id,
                                           int refund_steps,
                                           const std::vector<LedgerRefund>& ledger);

// Where a crash loop of the refund tools SIGKILLs its process, drawn from `rng`: mostly within
// 300 ms (start-up, recovery, the first attempts); some within 0.3-1.5 s (an unknown outcome
// from an earlier life reconciled); some within 2-3 s (a fresh lost reply reconciled 2.5 s
// after its attempt started: send_refund's 2 s attempt timeout plus its 0.5 s grace); some
// past 3 s, so that reconciliations complete between kills.
std::chrono::milliseconds DrawRefundKillDelay(std::mt19937_64& rng);

// Shared by the audits (refund_crash_audit.cc, refund_plan_audit.cc).
Result<std::unique_ptr<storage::Journal>> OpenForAudit(const std::string& journal);
// The integrity check and the card token check; violations go to `bad`.
Result<void> CheckJournalFiles(storage::Journal& journal, const std::string& journal_path,
                               std::vector<std::string>& bad);
// Figures of the paths a run's events took; `committed_ref_in_events` gets op id -> the
// provider_ref its OperationCommitted event names.
void CountPathEvents(const std::vector<storage::Event>& events, RefundFigures& figures,
                     std::map<std::string, std::string>& committed_ref_in_events);

}  // namespace reckon::testing
