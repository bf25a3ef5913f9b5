// FaultyJournal: a Journal that forwards to another one and injects the failures a disk can
// produce at commit time, so that tests can drive the "a commit failed" paths of whoever
// writes through the interface (GroupCommitter, the engine) without breaking a real file.
//
// Every call of Append or AppendGroup is one commit, counted from 1. By configuration:
//   - fail_commit = N: commit N fails before reaching the inner journal (nothing of it is
//     written); every request of it gets kUnavailable.
//   - fail_sync = N: commit N reaches the inner journal (its requests are durable), but every
//     request that the inner journal acknowledged gets kUnavailable instead, as when the
//     fsync after the write fails: the caller cannot know that its requests were kept.
//     Requests the inner journal refused keep their own error.
//   - commit_delay: each commit first sleeps this long on the calling thread (a slow fsync).
// A hook set with OnCommit runs at the start of every commit, on the committing thread, before
// any fault: a test uses it to act while a commit is in progress.
// After an injected failure the FaultyJournal is poisoned as a real journal is after a failed
// commit: every later commit fails with kUnavailable without reaching the inner journal,
// until the test builds a new one. Reads always go to the inner journal.
//
// Threading and ownership: as any Journal, one owner at a time (set_faults included). The
// inner journal is not owned and must outlive the FaultyJournal.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "reckon/storage/journal.h"

namespace reckon::storage {

class FaultyJournal final : public Journal {
 public:
  struct Faults {
    std::int64_t fail_commit = 0;  // the commit that fails unwritten; 0: none
    std::int64_t fail_sync = 0;    // the commit whose sync "fails" after writing; 0: none
    std::chrono::microseconds commit_delay{0};
  };

  FaultyJournal(Journal& inner, Faults faults) : inner_(inner), faults_(faults) {}
  explicit FaultyJournal(Journal& inner) : FaultyJournal(inner, Faults{}) {}

  // Replaces the configuration; commit numbers stay absolute (see commits()).
  void set_faults(const Faults& faults) { faults_ = faults; }
  // `hook(commit)` runs at the start of each commit; it may block (the commit waits for it).
  void OnCommit(std::function<void(std::int64_t commit)> hook) { on_commit_ = std::move(hook); }
  // Commits attempted so far, injected failures and poisoned refusals included.
  std::int64_t commits() const { return commits_; }
  bool poisoned() const { return poisoned_; }

  Result<AppendAck> Append(const AppendRequest& request) override;
  std::vector<Result<AppendAck>> AppendGroup(
      std::span<const AppendRequest* const> requests) override;

  using Journal::ListRuns;
  using Journal::ReadEvents;
  Result<std::optional<RunRow>> FindRun(const RunRef& run) override { return inner_.FindRun(run); }
  Result<std::optional<RunRow>> FindLatestRun(const std::string& workflow_id) override {
    return inner_.FindLatestRun(workflow_id);
  }
  Result<std::vector<RunRow>> ListRuns(std::optional<RunStatus> status) override {
    return inner_.ListRuns(std::move(status));
  }
  Result<std::vector<RunRow>> QueryRuns(const RunQuery& query) override {
    return inner_.QueryRuns(query);
  }
  Result<std::vector<Event>> ReadEvents(const RunRef& run, std::int64_t from_seq) override {
    return inner_.ReadEvents(run, from_seq);
  }
  Result<std::optional<OperationRow>> FindOperation(const std::string& operation_id) override {
    return inner_.FindOperation(operation_id);
  }
  Result<std::vector<OperationRow>> ListOperations(std::int64_t run_pk) override {
    return inner_.ListOperations(run_pk);
  }
  Result<std::string> IntegrityCheck() override { return inner_.IntegrityCheck(); }
  // Retention passes through, outside the commit count.
  Result<std::vector<RunRow>> ListArchivable(std::int64_t updated_before_us,
                                             std::size_t limit) override {
    return inner_.ListArchivable(updated_before_us, limit);
  }
  Result<void> DeleteRun(const RunRef& run, std::int64_t expected_next_seq) override {
    return inner_.DeleteRun(run, expected_next_seq);
  }
  // A contract is recorded in its own transaction, outside the commit count.
  Result<void> PutContract(const ContractRow& row) override { return inner_.PutContract(row); }
  Result<std::vector<ContractRow>> ListContracts() override { return inner_.ListContracts(); }
  int schema_version() const override { return inner_.schema_version(); }
  const std::string& path() const override { return inner_.path(); }

 private:
  Journal& inner_;
  Faults faults_;
  std::function<void(std::int64_t)> on_commit_;
  std::int64_t commits_ = 0;
  bool poisoned_ = false;
};

}  // namespace reckon::storage
