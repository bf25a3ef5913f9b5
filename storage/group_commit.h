// GroupCommitter: shares one journal commit (one fsync) among concurrent appends.
//
// Appends from any thread or coroutine are queued; a flush on the commit strand takes every
// queued request, hands them to Journal::AppendGroup (one transaction, each request failing on
// its own), and then completes each request. While one commit's fsync is in progress, new
// requests queue up and form the next group, so throughput grows with concurrency while a
// lone append pays for exactly one commit. It knows only the Journal interface: how a backend
// isolates the requests of a group (SQLite: savepoints) is the backend's business.
//
// Durability: a completion carries exactly what AppendGroup returned for that request, so an
// acknowledged append is durable in the sense of storage/journal.h, and a failed commit fails
// every request of its group with the journal's error (the journal then refuses later groups).
//
// Threading: AsyncAppend and Append are thread-safe. The Journal is touched only by flushes,
// which run serialized on a strand of the executor given at construction; nothing else may use
// the Journal while the GroupCommitter lives. The Journal must outlive the GroupCommitter. On
// destruction, requests still queued complete with Errc::kUnavailable.
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/journal.h"

namespace reckon::storage {

class GroupCommitter {
 public:
  using Signature = void(Result<AppendAck>);
  using Handler = boost::asio::any_completion_handler<Signature>;

  // Told after each group's AppendGroup returns, on the commit strand: how many requests the
  // group carried and how long AppendGroup took (transaction and fsync). Must be cheap and
  // thread-safe with respect to whatever it updates (metrics use relaxed atomics).
  using CommitObserver = std::function<void(std::size_t group_size, std::chrono::nanoseconds)>;

  struct Options {
    std::size_t max_group = 512;  // requests per transaction; the rest form the next group
    CommitObserver on_commit;     // empty: nothing observes (and no clock is read)
  };

  GroupCommitter(Journal& journal, boost::asio::any_io_executor executor, Options options);
  GroupCommitter(Journal& journal, boost::asio::any_io_executor executor)
      : GroupCommitter(journal, std::move(executor), Options{}) {}
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Completes with the AppendAck once the request is durable, or with the request's error.
  // The completion runs on the handler's associated executor.
  template <typename Token>
  auto AsyncAppend(AppendRequest request, Token&& token) {
    return boost::asio::async_initiate<Token, Signature>(
        [this](auto handler, AppendRequest request) {
          Enqueue(std::move(request), Handler(std::move(handler)));
        },
        token, std::move(request));
  }

  // Runs `work` on the commit strand between two groups, with the journal to itself: how a
  // party other than the appenders writes (the server's retention pass, api/server/
  // retention.h). Appends arriving meanwhile queue up and share the next commit, so keep it
  // short. Completes with what `work` returned, on the handler's associated executor.
  using ExclusiveWork = std::function<Result<void>(Journal&)>;
  using ExclusiveHandler = boost::asio::any_completion_handler<void(Result<void>)>;
  template <typename Token>
  auto AsyncExclusive(ExclusiveWork work, Token&& token) {
    return boost::asio::async_initiate<Token, void(Result<void>)>(
        [this](auto handler, ExclusiveWork work) {
          RunExclusive(std::move(work), ExclusiveHandler(std::move(handler)));
        },
        token, std::move(work));
  }

  // Blocks the calling thread until the request is durable. Must not be called from a thread
  // that runs the commit executor (it would wait for itself).
  Result<AppendAck> Append(AppendRequest request);

  struct Stats {
    std::uint64_t commits = 0;  // transactions committed
    std::uint64_t appends = 0;  // requests completed
  };
  Stats stats() const { return {commits_.load(), appends_.load()}; }

 private:
  struct Pending {
    AppendRequest request;
    Handler handler;
  };
  void Enqueue(AppendRequest request, Handler handler);
  void RunExclusive(ExclusiveWork work, ExclusiveHandler handler);
  void Flush();

  Journal& journal_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  Options options_;

  std::mutex mutex_;
  std::vector<Pending> pending_;  // guarded by mutex_
  bool flush_scheduled_ = false;  // guarded by mutex_

  std::atomic<std::uint64_t> commits_{0};
  std::atomic<std::uint64_t> appends_{0};
};

}  // namespace reckon::storage
