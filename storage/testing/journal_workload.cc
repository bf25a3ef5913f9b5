#include "reckon/storage/testing/journal_workload.h"

#include <variant>

namespace reckon::storage {
namespace {

std::string Describe(const RunRef& run) {
  return "run '" + run.workflow_id + "/" + run.run_id + "'";
}

const std::string* ValueOf(const Event& event) {
  const auto* marker = std::get_if<MarkerRecorded>(&event.body);
  return marker ? &marker->value_json : nullptr;
}

}  // namespace

std::string JournalWorkload::Value(std::size_t size) {
  std::string value = "\"v" + std::to_string(++counter_) + "-";
  while (value.size() + 1 < size) value.push_back(static_cast<char>('a' + rng_() % 26));
  value.push_back('"');
  return value;
}

const JournalWorkload::RunModel* JournalWorkload::PickRunning(const std::set<std::string>& taken) {
  std::vector<const RunModel*> running;
  for (const auto& [key, run] : runs_) {
    if (run.status == RunStatus::kRunning && !taken.contains(key)) running.push_back(&run);
  }
  if (running.empty()) return nullptr;
  return running[rng_() % running.size()];
}

AppendRequest JournalWorkload::NewRun() {
  AppendRequest request;
  request.run = {"wf-" + std::to_string(++counter_), "r1"};
  request.expected_next_seq = 1;
  request.now_us = counter_;
  request.workflow_type = "power-loss";
  const int events = 1 + static_cast<int>(rng_() % 3);
  for (int i = 0; i < events; ++i) {
    request.events.push_back(
        MarkerRecorded{"s" + std::to_string(i), "pl", Value(40 + rng_() % 400)});
  }
  if (rng_() % 2 == 0) {
    request.operations.push_back(OperationRow{"op-" + std::to_string(++counter_), "s0", "noop",
                                              SideEffect::kNonRepeatableWrite, "started", 1,
                                              "intent", "contract", "", 0});
  }
  if (rng_() % 10 < 3) {
    request.outbox.push_back(OutboxMessage{"msg-" + std::to_string(++counter_), "s0", "pl.out",
                                           Value(60)});
  }
  return request;
}

AppendRequest JournalWorkload::Continue(const RunModel& run, int events, std::size_t payload) {
  AppendRequest request;
  request.run = run.ref;
  request.expected_next_seq = static_cast<std::int64_t>(run.values.size()) + 1;
  request.now_us = ++counter_;
  for (int i = 0; i < events; ++i) {
    request.events.push_back(MarkerRecorded{"s", "pl", Value(payload / 2 + rng_() % payload)});
  }
  if (rng_() % 10 < 4) {
    std::string id = "op-" + std::to_string(++counter_);
    std::int64_t attempt = 1;
    if (!run.attempts.empty() && rng_() % 2 == 0) {
      auto existing = run.attempts.begin();
      std::advance(existing, rng_() % run.attempts.size());
      id = existing->first;
      attempt = existing->second + 1;
    }
    request.operations.push_back(OperationRow{id, "s", "noop", SideEffect::kNonRepeatableWrite,
                                              "started", attempt, "intent", "contract", "", 0});
  }
  if (rng_() % 10 < 2) {
    request.outbox.push_back(
        OutboxMessage{"msg-" + std::to_string(++counter_), "s", "pl.out", Value(60)});
  }
  if (rng_() % 10 == 0) request.status = RunStatus::kCompleted;
  return request;
}

AppendRequest JournalWorkload::ContinueAsNew(const RunModel& run) {
  AppendRequest closing = Continue(run, 1, 100);
  closing.status = RunStatus::kContinuedAsNew;
  AppendRequest next;
  next.run = {run.ref.workflow_id, "r" + std::to_string(++counter_)};
  next.expected_next_seq = 1;
  next.now_us = closing.now_us;
  next.workflow_type = "power-loss";
  next.events.push_back(MarkerRecorded{"s0", "pl", Value(80)});
  closing.chained.push_back(std::move(next));
  return closing;
}

std::vector<AppendRequest> JournalWorkload::Draw() {
  std::vector<AppendRequest> requests;
  std::set<std::string> taken;
  auto one = [&](int events, std::size_t payload) {
    const RunModel* run = rng_() % 4 == 0 ? nullptr : PickRunning(taken);
    requests.push_back(run ? Continue(*run, events, payload) : NewRun());
    taken.insert(Key(requests.back().run));
  };
  const auto shape = rng_() % 100;
  if (shape < 35) {
    one(1 + static_cast<int>(rng_() % 4), 300);
  } else if (shape < 60) {
    const int size = 2 + static_cast<int>(rng_() % 4);
    for (int i = 0; i < size; ++i) one(1 + static_cast<int>(rng_() % 3), 200);
  } else if (shape < 75) {
    const RunModel* run = PickRunning(taken);
    requests.push_back(run ? ContinueAsNew(*run) : NewRun());
  } else {
    one(2 + static_cast<int>(rng_() % 5), 6000);  // pages spill out of a small cache
  }
  return requests;
}

void JournalWorkload::Adopt(const AppendRequest& request) {
  RunModel& run = runs_[Key(request.run)];
  run.ref = request.run;
  for (const EventBody& body : request.events) {
    run.values.push_back(std::get<MarkerRecorded>(body).value_json);
  }
  if (request.status) run.status = *request.status;
  for (const OperationRow& op : request.operations) run.attempts[op.operation_id] = op.attempt;
  for (const OutboxMessage& message : request.outbox) outbox_.insert(message.message_id);
  for (const AppendRequest& next : request.chained) Adopt(next);
}

Result<void> JournalWorkload::Step(Journal& journal) {
  if (!in_flight_.empty()) {
    return Err(Errc::kFailedPrecondition,
               "a transaction is in flight since the journal failed: Check a reopened journal "
               "before the next step");
  }
  std::vector<AppendRequest> requests = Draw();
  std::vector<Result<AppendAck>> results;
  if (requests.size() == 1) {
    results.push_back(journal.Append(requests.front()));
  } else {
    std::vector<const AppendRequest*> pointers;
    for (const AppendRequest& request : requests) pointers.push_back(&request);
    results = journal.AppendGroup(pointers);
  }
  std::size_t failed = 0;
  for (const auto& result : results) failed += result ? 0 : 1;
  if (failed == 0) {
    for (const AppendRequest& request : requests) Adopt(request);
    ++acknowledged_;
    return Ok();
  }
  if (failed != results.size()) {
    for (const auto& result : results) {
      if (!result) {
        return Err(Errc::kInternal, "the workload's model is wrong: one request of a group "
                                    "failed alone: " + result.error().ToString());
      }
    }
  }
  for (AppendRequest& request : requests) {
    std::vector<AppendRequest> chained = std::move(request.chained);
    request.chained.clear();
    in_flight_.push_back(std::move(request));
    for (AppendRequest& next : chained) in_flight_.push_back(std::move(next));
  }
  for (const auto& result : results) {
    if (!result) return result.error();
  }
  return Ok();
}

Result<int> JournalWorkload::Presence(Journal& journal, const AppendRequest& request) {
  RECKON_TRY(auto events, journal.ReadEvents(request.run, request.expected_next_seq));
  std::size_t matching = 0;
  while (matching < events.size() && matching < request.events.size()) {
    const std::string* value = ValueOf(events[matching]);
    if (value == nullptr ||
        *value != std::get<MarkerRecorded>(request.events[matching]).value_json) {
      break;
    }
    ++matching;
  }
  if (matching == 0) return 0;
  return matching == request.events.size() ? 1 : -1;
}

Result<void> JournalWorkload::CheckRun(Journal& journal, const RunModel& run) {
  RECKON_TRY(auto row, journal.FindRun(run.ref));
  if (!row) {
    return Err(Errc::kCorruption, "acknowledged " + Describe(run.ref) + " is missing");
  }
  RECKON_TRY(auto events, journal.ReadEvents(run.ref));
  if (events.size() != run.values.size() ||
      row->next_seq != static_cast<std::int64_t>(run.values.size()) + 1) {
    return Err(Errc::kCorruption, Describe(run.ref) + " has " + std::to_string(events.size()) +
                                      " events (next_seq " + std::to_string(row->next_seq) +
                                      ") where " + std::to_string(run.values.size()) +
                                      " were acknowledged");
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    const std::string* value = ValueOf(events[i]);
    if (value == nullptr || *value != run.values[i] ||
        events[i].seq != static_cast<std::int64_t>(i) + 1) {
      return Err(Errc::kCorruption, Describe(run.ref) + ": event " + std::to_string(i + 1) +
                                        " differs from the acknowledged one");
    }
  }
  if (row->status != run.status) {
    return Err(Errc::kCorruption, Describe(run.ref) + " has status '" +
                                      std::string(RunStatusName(row->status)) + "', expected '" +
                                      std::string(RunStatusName(run.status)) + "'");
  }
  RECKON_TRY(auto operations, journal.ListOperations(row->run_pk));
  std::map<std::string, std::int64_t> attempts;
  for (const OperationRow& op : operations) attempts[op.operation_id] = op.attempt;
  if (attempts != run.attempts) {
    return Err(Errc::kCorruption, Describe(run.ref) + " has " +
                                      std::to_string(attempts.size()) + " operations (or "
                                      "attempts) that differ from the acknowledged " +
                                      std::to_string(run.attempts.size()));
  }
  return Ok();
}

Result<void> JournalWorkload::Check(Journal& journal, const std::set<std::string>& outbox_ids) {
  if (!in_flight_.empty()) {
    int whole = 0;
    int absent = 0;
    for (const AppendRequest& request : in_flight_) {
      RECKON_TRY(int presence, Presence(journal, request));
      if (presence < 0) {
        return Err(Errc::kCorruption, "unacknowledged append to " + Describe(request.run) +
                                          " is half on disk: some of its events are missing");
      }
      (presence == 1 ? whole : absent) += 1;
    }
    if (whole != 0 && absent != 0) {
      return Err(Errc::kCorruption, "an unacknowledged transaction is half on disk: " +
                                        std::to_string(whole) + " of its requests are there, " +
                                        std::to_string(absent) + " are not");
    }
    if (whole != 0) {
      for (const AppendRequest& request : in_flight_) Adopt(request);
      ++adopted_;
    } else {
      ++lost_in_flight_;
    }
    in_flight_.clear();
  }
  RECKON_TRY(auto rows, journal.ListRuns());
  for (const RunRow& row : rows) {
    if (!runs_.contains(Key(row.ref))) {
      return Err(Errc::kCorruption, Describe(row.ref) + " is in the journal but was never "
                                                         "acknowledged nor in flight");
    }
  }
  for (const auto& [key, run] : runs_) {
    RECKON_TRY(CheckRun(journal, run));
  }
  if (rows.size() != runs_.size()) {
    return Err(Errc::kCorruption, "the journal lists " + std::to_string(rows.size()) +
                                      " runs where " + std::to_string(runs_.size()) +
                                      " were acknowledged");
  }
  if (outbox_ids != outbox_) {
    return Err(Errc::kCorruption, "the outbox holds " + std::to_string(outbox_ids.size()) +
                                      " messages where " + std::to_string(outbox_.size()) +
                                      " were acknowledged, or other ones");
  }
  return Ok();
}

}  // namespace reckon::storage
