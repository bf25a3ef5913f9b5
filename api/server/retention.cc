#include "reckon/api/server/retention.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "reckon/storage/archive/archiver.h"

namespace reckon::api {

namespace asio = boost::asio;

RetentionLoop::RetentionLoop(asio::any_io_executor executor, storage::GroupCommitter& committer,
                             RetentionOptions options)
    : executor_(executor),
      committer_(committer),
      options_(std::move(options)),
      timer_(executor),
      alive_(std::make_shared<bool>(true)) {}

RetentionLoop::~RetentionLoop() { Stop(); }

void RetentionLoop::Start() { asio::co_spawn(executor_, Loop(alive_), asio::detached); }

void RetentionLoop::Stop() {
  *alive_ = false;
  timer_.cancel();
}

asio::awaitable<void> RetentionLoop::Loop(std::shared_ptr<bool> alive) {
  while (*alive) {
    timer_.expires_after(options_.every);
    boost::system::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (!*alive) co_return;
    storage::ArchivePassOptions pass;
    pass.now_us = options_.now_us();
    pass.older_than_us = options_.age.count();
    pass.out = options_.archive_dir;
    pass.out_is_dir = true;
    pass.max_runs = options_.max_runs;
    auto report = std::make_shared<storage::ArchivePassReport>();
    auto work = [pass, report](storage::Journal& journal) -> Result<void> {
      std::error_code made;
      std::filesystem::create_directories(pass.out, made);
      if (made) {
        return Err(Errc::kUnavailable, "cannot create the archive directory '" + pass.out +
                                           "': " + made.message());
      }
      RECKON_TRY(*report, storage::ArchiveFinishedRuns(journal, pass));
      return Ok();
    };
    auto done = committer_.AsyncExclusive(std::move(work), asio::use_awaitable);
    Result<void> result = co_await std::move(done);
    if (!*alive) co_return;
    ++totals_.passes;
    if (!result) {
      ++totals_.failures;
      spdlog::warn("retention: the archive pass failed, the next one tries again: {}",
                   result.error().ToString());
      continue;
    }
    totals_.runs_archived += static_cast<std::int64_t>(report->archived.size());
    if (!report->file.empty()) {
      spdlog::info("retention: archived {} finished run(s) to {} and deleted them from the "
                   "journal",
                   report->archived.size(), report->file);
    }
  }
}

}  // namespace reckon::api
