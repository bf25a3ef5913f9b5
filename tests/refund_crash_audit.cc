#include "tests/refund_crash_audit.h"

#include <boost/json.hpp>

#include <fstream>
#include <iterator>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/json/parse.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <sstream>

#include "reckon/engine/operation_state.h"
#include "reckon/storage/backend/open_backend.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

namespace reckon::testing {

std::string RefundWorkflowId(int i) { return "refund-" + std::to_string(i); }

std::string RefundWorkflowInput(int i, std::uint64_t seed) {
  static const char* const kReasons[] = {"damaged in transit", "duplicate charge",
                                         "item not received", "customer changed mind"};
  return boost::json::serialize(
      boost::json::object{{"payment_id", "pay-" + std::to_string(i)},
                          {"reason", kReasons[(seed + static_cast<std::uint64_t>(i)) % 4]}});
}
namespace {

namespace json = boost::json;
using storage::Event;
using storage::OperationRow;
using storage::RunRow;

// Closes the descriptor on every path out.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

Error SysError(const std::string& what) {
  return Err(Errc::kUnavailable, what + ": " + std::strerror(errno));
}

// GET `target` on 127.0.0.1:`port` with "Connection: close"; the raw response.
Result<std::string> BlockingGet(std::uint16_t port, const std::string& target) {
  Socket socket(::socket(AF_INET, SOCK_STREAM, 0));
  if (socket.fd() < 0) return SysError("socket");
  timeval timeout{10, 0};
  ::setsockopt(socket.fd(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(socket.fd(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(socket.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return SysError("connect to 127.0.0.1:" + std::to_string(port));
  }
  const std::string request = "GET " + target +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  for (std::size_t sent = 0; sent < request.size();) {
    ssize_t n = ::send(socket.fd(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("send");
    sent += static_cast<std::size_t>(n);
  }
  std::string response;
  char buffer[16384];
  for (;;) {
    ssize_t n = ::recv(socket.fd(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("recv");
    if (n == 0) break;
    response.append(buffer, static_cast<std::size_t>(n));
  }
  return response;
}

std::string StringField(const json::object& object, std::string_view name) {
  const json::value* value = object.if_contains(name);
  return value && value->is_string() ? std::string(value->as_string()) : std::string();
}

std::string Join(const std::map<std::string, int>& counts) {
  std::string text;
  for (const auto& [name, n] : counts) {
    if (!text.empty()) text += ',';
    text += name + "=" + std::to_string(n);
  }
  return "{" + text + "}";
}

}  // namespace

// An audit never owns the journal: a SQLite file read-only; a PostgreSQL database as a
// companion connection (no ownership lock, no migration, no shard lease).
Result<std::unique_ptr<storage::Journal>> OpenForAudit(const std::string& journal) {
  if (storage::BackendOf(journal) == storage::BackendKind::kPostgres) {
    storage::OpenJournalOptions companion;
    companion.mode = storage::OpenJournalOptions::Mode::kCompanion;
    return storage::OpenJournal(journal, companion);
  }
  storage::SqliteJournalOptions read_only;
  read_only.mode = storage::SqliteJournalOptions::Mode::kReadOnly;
  return storage::OpenSqliteJournal(journal, read_only);
}

Result<void> CheckJournalFiles(storage::Journal& journal, const std::string& journal_path,
                               std::vector<std::string>& bad) {
  RECKON_TRY(std::string integrity, journal.IntegrityCheck());
  if (integrity != "ok") bad.push_back("integrity_check: " + integrity);
  // Secrets stay in the worker: no card token may reach the journal or its WAL.
  if (storage::BackendOf(journal_path) != storage::BackendKind::kSqlite) return Ok();
  for (const std::string& file : {journal_path, journal_path + "-wal"}) {
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find("tok_secret_") != std::string::npos) {
      bad.push_back(file + " contains a card token (tok_secret_...)");
    }
  }
  return Ok();
}

void CountPathEvents(const std::vector<storage::Event>& events, RefundFigures& figures,
                     std::map<std::string, std::string>& committed_ref_in_events) {
  std::map<std::string, std::string> tool_of;  // op id -> tool
  for (const storage::Event& event : events) {
    if (auto* e = std::get_if<storage::OperationPrepared>(&event.body)) {
      tool_of[e->operation_id] = e->tool;
    } else if (auto* e = std::get_if<storage::OutcomeUnknown>(&event.body)) {
      ++figures.outcome_unknown;
      ++figures.unknown_reasons[tool_of[e->operation_id] + "/" + e->reason];
    } else if (auto* e = std::get_if<storage::ReconciliationResult>(&event.body)) {
      ++figures.reconciliations;
      ++figures.reconciliation_results[std::string(storage::ReconcileVerdictName(e->result))];
    } else if (auto* e = std::get_if<storage::OperationCommitted>(&event.body)) {
      committed_ref_in_events[e->operation_id] = e->provider_ref;
      if (tool_of[e->operation_id] == "send_refund") {
        ++figures.commit_sources[std::string(storage::CommitSourceName(e->source))];
      }
    }
  }
}

Result<std::vector<LedgerRefund>> FetchRefunds(std::uint16_t port) {
  RECKON_TRY(std::string response, BlockingGet(port, "/refunds"));
  if (response.rfind("HTTP/1.1 200", 0) != 0) {
    return Err(Errc::kInternal, "GET /refunds answered: " + response.substr(0, 200));
  }
  std::size_t body_at = response.find("\r\n\r\n");
  if (body_at == std::string::npos) return Err(Errc::kInternal, "GET /refunds: no body");
  boost::system::error_code ec;
  json::value body = json::parse(std::string_view(response).substr(body_at + 4), ec);
  if (ec || !body.is_array()) {
    return Err(Errc::kInternal, "GET /refunds: not a JSON array: " + response.substr(body_at + 4, 200));
  }
  std::vector<LedgerRefund> refunds;
  for (const json::value& item : body.as_array()) {
    const json::object& object = item.as_object();
    LedgerRefund refund;
    refund.refund_id = StringField(object, "refund_id");
    refund.payment_id = StringField(object, "payment_id");
    refund.amount_cents = object.at("amount_cents").to_number<std::int64_t>();
    refund.idempotency_key = StringField(object, "idempotency_key");
    refunds.push_back(std::move(refund));
  }
  return refunds;
}

void RefundFigures::Add(const RefundFigures& other) {
  runs += other.runs;
  for (const auto& [k, n] : other.run_status) run_status[k] += n;
  send_refund_committed += other.send_refund_committed;
  send_refund_not_committed += other.send_refund_not_committed;
  outcome_unknown += other.outcome_unknown;
  for (const auto& [k, n] : other.unknown_reasons) unknown_reasons[k] += n;
  reconciliations += other.reconciliations;
  for (const auto& [k, n] : other.reconciliation_results) reconciliation_results[k] += n;
  for (const auto& [k, n] : other.commit_sources) commit_sources[k] += n;
  refunds += other.refunds;
  waiting_for_person += other.waiting_for_person;
}

std::string RefundFigures::ToString() const {
  std::ostringstream out;
  out << "runs=" << runs << " " << Join(run_status)
      << " send_refund committed=" << send_refund_committed
      << " not_committed=" << send_refund_not_committed << " refunds=" << refunds
      << " | OutcomeUnknown=" << outcome_unknown << " " << Join(unknown_reasons)
      << " | ReconciliationResult=" << reconciliations << " " << Join(reconciliation_results)
      << " | commit sources " << Join(commit_sources);
  if (waiting_for_person > 0) out << " | waiting for a person " << waiting_for_person;
  return out.str();
}

Result<RefundAudit> AuditRefundJournal(const std::string& journal_path, int count,
                                       const std::vector<LedgerRefund>& ledger,
                                       RefundAuditOptions options) {
  RECKON_TRY(auto journal, OpenForAudit(journal_path));
  RefundAudit audit;
  std::vector<std::string>& bad = audit.violations;
  RefundFigures& figures = audit.figures;
  figures.refunds = static_cast<int>(ledger.size());

  RECKON_TRY(CheckJournalFiles(*journal, journal_path, bad));

  const std::string committed_name(OperationStateName(OperationState::kCommitted));
  std::map<std::string, std::vector<const LedgerRefund*>> by_key, by_payment;
  for (const LedgerRefund& refund : ledger) {
    by_key[refund.idempotency_key].push_back(&refund);
    by_payment[refund.payment_id].push_back(&refund);
  }
  auto refund_list = [](const std::vector<const LedgerRefund*>& refunds) {
    std::string text;
    for (const LedgerRefund* r : refunds) {
      text += (text.empty() ? "" : ", ") + r->refund_id + "(" + r->payment_id + ", key " +
              (r->idempotency_key.empty() ? "none" : r->idempotency_key) + ")";
    }
    return "[" + text + "]";
  };
  auto refunds_with_key = [&](const std::string& key) {
    auto it = by_key.find(key);
    return it == by_key.end() ? std::vector<const LedgerRefund*>() : it->second;
  };

  RECKON_TRY(std::vector<RunRow> runs, journal->ListRuns());
  figures.runs = static_cast<int>(runs.size());
  std::map<std::string, int> runs_per_workflow;
  std::set<std::string> committed_send_ops;
  std::set<std::string> waiting_send_ops;  // not settled: a person decides
  const std::string needs_human_name(OperationStateName(OperationState::kNeedsHuman));
  const std::string awaiting_name(OperationStateName(OperationState::kAwaitingApproval));
  for (const RunRow& run : runs) {
    const std::string& id = run.ref.workflow_id;
    ++runs_per_workflow[id];
    const std::string status(storage::RunStatusName(run.status));
    ++figures.run_status[status];
    const std::string where = id + " (run " + run.ref.run_id + ")";

    RECKON_TRY(std::vector<Event> events, journal->ReadEvents(run.ref));
    std::map<std::string, std::string> committed_ref_in_events;  // op id -> provider_ref
    CountPathEvents(events, figures, committed_ref_in_events);
    std::string result_json;
    for (const Event& event : events) {
      if (auto* e = std::get_if<storage::WorkflowCompleted>(&event.body)) result_json = e->result_json;
    }

    RECKON_TRY(std::vector<OperationRow> operations, journal->ListOperations(run.run_pk));
    // A run left running on an operation that waits for a person, where that is allowed.
    const bool waiting =
        options.allow_waiting_for_person && !storage::IsTerminal(run.status) &&
        std::any_of(operations.begin(), operations.end(), [&](const OperationRow& op) {
          return op.state == needs_human_name || op.state == awaiting_name;
        });
    if (waiting) {
      ++figures.waiting_for_person;
    } else if (!storage::IsTerminal(run.status)) {
      bad.push_back(where + " is still " + status);
    }
    const OperationRow* send = nullptr;
    for (const OperationRow& op : operations) {
      const std::string what = where + " " + op.tool + " " + op.operation_id + " [" + op.state +
                                ", attempt " + std::to_string(op.attempt) + "]";
      const bool committed = op.state == committed_name;
      std::vector<const LedgerRefund*> keyed = refunds_with_key(op.operation_id);
      if (committed) {
        auto evidence = committed_ref_in_events.find(op.operation_id);
        if (evidence == committed_ref_in_events.end()) {
          bad.push_back(what + ": the row is committed but no OperationCommitted event is");
        } else if (evidence->second != op.provider_ref) {
          bad.push_back(what + ": the row's provider_ref '" + op.provider_ref +
                        "' differs from its OperationCommitted event's '" + evidence->second +
                        "'");
        }
      }
      if (op.tool != "send_refund") {
        if (!keyed.empty()) bad.push_back(what + ": the ledger has refunds with its key " + refund_list(keyed));
        continue;
      }
      if (send != nullptr) bad.push_back(what + ": a second send_refund operation in one run");
      send = &op;
      const std::string payment = "pay-" + id.substr(id.find('-') + 1);
      if (!committed) {
        ++figures.send_refund_not_committed;
        if (waiting && (op.state == needs_human_name || op.state == awaiting_name)) {
          waiting_send_ops.insert(op.operation_id);
          if (keyed.size() > 1) {
            bad.push_back(what + ": waits for a person, and the ledger holds " +
                          refund_list(keyed));
          }
        } else if (!keyed.empty()) {
          bad.push_back(what + ": not committed, yet the ledger holds " + refund_list(keyed));
        }
        continue;
      }
      ++figures.send_refund_committed;
      committed_send_ops.insert(op.operation_id);
      if (keyed.size() != 1) {
        bad.push_back(what + ": committed with provider_ref '" + op.provider_ref + "', and " +
                      std::to_string(keyed.size()) + " refunds carry its key " +
                      refund_list(keyed));
      } else if (keyed.front()->refund_id != op.provider_ref) {
        bad.push_back(what + ": provider_ref '" + op.provider_ref +
                      "' but the refund with its key is " + refund_list(keyed));
      }
      auto paid = by_payment.find(payment);
      std::vector<const LedgerRefund*> of_payment =
          paid == by_payment.end() ? std::vector<const LedgerRefund*>() : paid->second;
      if (of_payment.size() != 1) {
        bad.push_back(what + ": " + std::to_string(of_payment.size()) + " refunds of " +
                      payment + " in the ledger " + refund_list(of_payment));
      }
      if (run.status == storage::RunStatus::kCompleted) {
        boost::system::error_code ec;
        json::value result = json::parse(result_json, ec);
        std::string refund_id;
        if (!ec && result.is_object()) refund_id = StringField(result.as_object(), "refund_id");
        if (refund_id != op.provider_ref) {
          bad.push_back(where + ": the workflow's result names refund '" + refund_id +
                        "', the operation's provider_ref is '" + op.provider_ref + "'");
        }
      }
    }
    if (run.status == storage::RunStatus::kCompleted && (send == nullptr || send->state != committed_name)) {
      bad.push_back(where + " completed without a committed send_refund");
    }
  }

  for (int i = 0; i < count; ++i) {
    const std::string id = "refund-" + std::to_string(i);
    auto it = runs_per_workflow.find(id);
    if (it == runs_per_workflow.end()) {
      bad.push_back(id + " is missing from the journal (lost workflow)");
    } else if (it->second != 1) {
      bad.push_back(id + " has " + std::to_string(it->second) + " runs");
    }
    runs_per_workflow.erase(id);
  }
  for (const auto& [id, n] : runs_per_workflow) bad.push_back("unexpected workflow " + id);

  std::size_t refunds_of_waiting = 0;
  for (const LedgerRefund& refund : ledger) {
    if (waiting_send_ops.contains(refund.idempotency_key)) {
      ++refunds_of_waiting;
    } else if (!committed_send_ops.contains(refund.idempotency_key)) {
      bad.push_back("ledger refund " + refund.refund_id + " of " + refund.payment_id +
                    " has key '" + refund.idempotency_key +
                    "', which is no committed send_refund operation of the journal");
    }
  }
  if (ledger.size() != committed_send_ops.size() + refunds_of_waiting) {
    bad.push_back("the ledger holds " + std::to_string(ledger.size()) + " refunds, the journal " +
                  std::to_string(committed_send_ops.size()) +
                  " committed send_refund operations (and " +
                  std::to_string(refunds_of_waiting) + " refunds of operations waiting for a person)");
  }
  return audit;
}

}  // namespace reckon::testing

namespace reckon::testing {

std::chrono::milliseconds DrawRefundKillDelay(std::mt19937_64& rng) {
  auto uniform = [&rng](int low, int high) {
    return std::chrono::milliseconds(std::uniform_int_distribution<int>(low, high)(rng));
  };
  const int band = std::uniform_int_distribution<int>(0, 99)(rng);
  if (band < 60) return uniform(0, 300);
  if (band < 75) return uniform(300, 1500);
  if (band < 85) return uniform(2000, 3000);
  return uniform(3000, 4500);
}

}  // namespace reckon::testing
