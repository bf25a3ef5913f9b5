#include "reckon/storage/testing/faulty_journal.h"

#include <thread>
#include <utility>

namespace reckon::storage {

Result<AppendAck> FaultyJournal::Append(const AppendRequest& request) {
  const AppendRequest* one[] = {&request};
  return std::move(AppendGroup(one).front());
}

std::vector<Result<AppendAck>> FaultyJournal::AppendGroup(
    std::span<const AppendRequest* const> requests) {
  const std::int64_t commit = ++commits_;
  if (on_commit_) on_commit_(commit);
  if (faults_.commit_delay.count() > 0) std::this_thread::sleep_for(faults_.commit_delay);
  auto fail_all = [&](const std::string& why) {
    const Error error = Err(Errc::kUnavailable, "journal '" + path() + "' commit " +
                                                    std::to_string(commit) + ": " + why);
    return std::vector<Result<AppendAck>>(requests.size(), Result<AppendAck>(error));
  };
  if (poisoned_) {
    return fail_all("refused: an earlier commit failed (injected); reopen the journal");
  }
  if (commit == faults_.fail_commit) {
    poisoned_ = true;
    return fail_all("injected commit failure; nothing of it was written");
  }
  std::vector<Result<AppendAck>> results = inner_.AppendGroup(requests);
  if (commit == faults_.fail_sync) {
    poisoned_ = true;
    const Error error = Err(Errc::kUnavailable,
                            "journal '" + path() + "' commit " + std::to_string(commit) +
                                ": injected sync failure; whether it is durable is unknown");
    for (Result<AppendAck>& result : results) {
      if (result) result = error;
    }
  }
  return results;
}

}  // namespace reckon::storage
