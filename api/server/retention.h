// RetentionLoop: `reckon server --retention AGE` (docs/OPERATIONS.md, "Retention"). Every
// `every`, one archive pass (storage/archive/archiver.h) moves finished runs last updated more
// than AGE ago into a new archive file in `archive_dir` and deletes them from the journal.
//
// Threading: the pass runs on the journal's commit side, as GroupCommitter::AsyncExclusive
// work between two groups (storage/journal.h: the journal has one user at a time); its reads,
// the archive file's write and fsync, and the deletions delay the commits queued meanwhile,
// so a pass takes at most `max_runs` runs. The loop itself lives on the engine's executor.
// A failed pass is logged and the next one tries again (what it archived and did not delete
// is archived again: see archiver.h). Not for cluster mode: the server refuses --retention
// with --cluster.
//
// Lifetime: the GroupCommitter must outlive the loop; Stop() (or destruction) ends it.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "reckon/storage/group_commit.h"

namespace reckon::api {

struct RetentionOptions {
  std::chrono::microseconds age{0};     // archive finished runs older than this
  std::chrono::milliseconds every{60'000};  // between passes
  std::string archive_dir;              // created if missing
  std::size_t max_runs = 500;           // per pass
  std::function<std::int64_t()> now_us;  // the clock (the server's)
};

class RetentionLoop {
 public:
  RetentionLoop(boost::asio::any_io_executor executor, storage::GroupCommitter& committer,
                RetentionOptions options);
  ~RetentionLoop();
  RetentionLoop(const RetentionLoop&) = delete;
  RetentionLoop& operator=(const RetentionLoop&) = delete;

  // Starts the passes; the first one after `every`.
  void Start();
  void Stop();

  struct Totals {
    std::int64_t passes = 0;
    std::int64_t runs_archived = 0;
    std::int64_t failures = 0;
  };
  const Totals& totals() const { return totals_; }

 private:
  boost::asio::awaitable<void> Loop(std::shared_ptr<bool> alive);

  boost::asio::any_io_executor executor_;
  storage::GroupCommitter& committer_;
  RetentionOptions options_;
  boost::asio::steady_timer timer_;
  std::shared_ptr<bool> alive_;
  Totals totals_;
};

}  // namespace reckon::api
