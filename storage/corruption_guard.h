// CorruptionGuard: a Journal that forwards every call to another one and, when a call reports
// Errc::kCorruption (a damaged file), tells its owner once, through a callback, before handing
// the error back. A process wraps the connections it serves queries from, so that a damaged
// journal found by any read stops it, as a failed commit stops the engine: nothing read from
// such a file can be trusted. Given `stop_on_unavailable`, it does the same for
// Errc::kUnavailable: for a journal in a database server (PostgreSQL), a lost connection means
// the owner's connection is likely gone too, and the process should exit so that a supervisor
// restarts it and it reopens and recovers (an idle engine would not notice on its own).
//
// Ownership: does not own the wrapped journal, which must outlive it. Threading: as the wrapped
// journal; the callback runs on the caller's thread, inside the failing call, and must not call
// back into this journal.
#pragma once

#include <functional>
#include <utility>

#include "reckon/storage/journal.h"

namespace reckon::storage {

class CorruptionGuard final : public Journal {
 public:
  using OnCorruption = std::function<void(const Error& error)>;
  CorruptionGuard(Journal& inner, OnCorruption on_corruption, bool stop_on_unavailable = false)
      : inner_(inner),
        on_corruption_(std::move(on_corruption)),
        stop_on_unavailable_(stop_on_unavailable) {}
  using Journal::ListRuns;
  using Journal::ReadEvents;

  Result<AppendAck> Append(const AppendRequest& request) override {
    return Check(inner_.Append(request));
  }
  std::vector<Result<AppendAck>> AppendGroup(
      std::span<const AppendRequest* const> requests) override {
    auto results = inner_.AppendGroup(requests);
    for (const auto& result : results) Note(result);
    return results;
  }
  Result<std::optional<RunRow>> FindRun(const RunRef& run) override {
    return Check(inner_.FindRun(run));
  }
  Result<std::optional<RunRow>> FindLatestRun(const std::string& workflow_id) override {
    return Check(inner_.FindLatestRun(workflow_id));
  }
  Result<std::vector<RunRow>> ListRuns(std::optional<RunStatus> status) override {
    return Check(inner_.ListRuns(status));
  }
  Result<std::vector<RunRow>> QueryRuns(const RunQuery& query) override {
    return Check(inner_.QueryRuns(query));
  }
  Result<std::vector<Event>> ReadEvents(const RunRef& run, std::int64_t from_seq) override {
    return Check(inner_.ReadEvents(run, from_seq));
  }
  Result<std::optional<OperationRow>> FindOperation(const std::string& operation_id) override {
    return Check(inner_.FindOperation(operation_id));
  }
  Result<std::vector<OperationRow>> ListOperations(std::int64_t run_pk) override {
    return Check(inner_.ListOperations(run_pk));
  }
  Result<std::string> IntegrityCheck() override { return Check(inner_.IntegrityCheck()); }
  Result<std::vector<RunRow>> ListArchivable(std::int64_t updated_before_us,
                                             std::size_t limit) override {
    return Check(inner_.ListArchivable(updated_before_us, limit));
  }
  Result<void> DeleteRun(const RunRef& run, std::int64_t expected_next_seq) override {
    return Check(inner_.DeleteRun(run, expected_next_seq));
  }
  Result<void> PutContract(const ContractRow& row) override {
    return Check(inner_.PutContract(row));
  }
  Result<std::vector<ContractRow>> ListContracts() override {
    return Check(inner_.ListContracts());
  }
  int schema_version() const override { return inner_.schema_version(); }
  const std::string& path() const override { return inner_.path(); }
  std::string integrity_warning() const override { return inner_.integrity_warning(); }

 private:
  template <class R>
  void Note(const R& result) {
    if (!result && !reported_ &&
        (result.error().code() == Errc::kCorruption ||
         (stop_on_unavailable_ && result.error().code() == Errc::kUnavailable))) {
      reported_ = true;
      if (on_corruption_) on_corruption_(result.error());
    }
  }
  template <class R>
  R Check(R result) {
    Note(result);
    return result;
  }

  Journal& inner_;
  OnCorruption on_corruption_;
  bool stop_on_unavailable_ = false;
  bool reported_ = false;
};

}  // namespace reckon::storage
