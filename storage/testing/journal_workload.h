// JournalWorkload: a seeded random writer of journal appends that remembers what the journal
// acknowledged, and checks a journal reopened after a crash or power cut against it. Test
// support only (the power-loss tests, storage/sqlite/journal_power_loss_test.cc).
//
// A step is one transaction of one of these shapes, drawn from the seed: one Append (a new run,
// or more events for a running one, with an operation upsert, an outbox message or a status
// change), an AppendGroup of several runs, a chained append (a run continues as new: it closes
// and its successor is created in the same transaction), or a large append whose pages spill
// out of the cache. Every event is a MarkerRecorded whose value is unique, so a check can tell
// exactly which appends are on disk.
//
// The model: what was acknowledged (the call returned success), plus the one transaction in
// flight when the journal last failed. Check holds a reopened journal to the Journal
// durability contract (storage/journal.h): every acknowledged append is there exactly, the
// in-flight transaction is there whole or not at all (if whole, the model adopts it), and
// nothing else is there: no other run, event, operation or outbox message.
//
// A value type that references no journal between calls; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/journal.h"

namespace reckon::storage {

class JournalWorkload {
 public:
  explicit JournalWorkload(std::uint64_t seed) : rng_(seed) {}

  // Runs one random transaction against `journal`. Success: it was acknowledged and the model
  // has it. Failure: the journal's error; the transaction is in flight until the next Check.
  // A step while another is in flight is a test bug (kFailedPrecondition).
  Result<void> Step(Journal& journal);

  // Checks `journal` against the model (see the file comment). kDataLoss-like violations come
  // back as kCorruption with a message naming the run and what differs; read errors as they
  // are. `outbox_ids`: the message ids in the journal's outbox table, read by the caller (the
  // Journal interface has no outbox listing).
  Result<void> Check(Journal& journal, const std::set<std::string>& outbox_ids);

  std::int64_t acknowledged() const { return acknowledged_; }    // transactions
  std::int64_t adopted() const { return adopted_; }              // in flight, found whole
  std::int64_t lost_in_flight() const { return lost_in_flight_; }  // in flight, found absent

 private:
  struct RunModel {
    RunRef ref;
    RunStatus status = RunStatus::kRunning;
    std::vector<std::string> values;                // value_json of events 1..n
    std::map<std::string, std::int64_t> attempts;  // operation id -> attempt
  };
  std::string Key(const RunRef& run) const { return run.workflow_id + "/" + run.run_id; }
  AppendRequest NewRun();
  AppendRequest Continue(const RunModel& run, int events, std::size_t payload);
  AppendRequest ContinueAsNew(const RunModel& run);
  std::string Value(std::size_t size);
  const RunModel* PickRunning(const std::set<std::string>& taken);
  void Adopt(const AppendRequest& request);  // the request is on disk: the model takes it
  std::vector<AppendRequest> Draw();          // the requests of one transaction
  // Whether the in-flight `request` is on disk: 1 whole, 0 absent, -1 partly (a violation).
  Result<int> Presence(Journal& journal, const AppendRequest& request);
  Result<void> CheckRun(Journal& journal, const RunModel& run);

  std::mt19937_64 rng_;
  std::map<std::string, RunModel> runs_;  // by Key()
  std::set<std::string> outbox_;          // message ids acknowledged
  std::vector<AppendRequest> in_flight_;  // one transaction, chained requests flattened
  std::int64_t counter_ = 0;              // makes ids and values unique
  std::int64_t acknowledged_ = 0;
  std::int64_t adopted_ = 0;
  std::int64_t lost_in_flight_ = 0;
};

}  // namespace reckon::storage
