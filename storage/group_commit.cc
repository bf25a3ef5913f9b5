#include "reckon/storage/group_commit.h"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include <future>
#include <utility>

namespace reckon::storage {
namespace {

// Runs `handler(result)` on the handler's associated executor.
void Complete(GroupCommitter::Handler handler, Result<AppendAck> result,
              const boost::asio::any_io_executor& fallback) {
  auto executor = boost::asio::get_associated_executor(handler, fallback);
  auto call = [handler = std::move(handler), result = std::move(result)]() mutable {
    std::move(handler)(std::move(result));
  };
  boost::asio::dispatch(executor, std::move(call));
}

}  // namespace

GroupCommitter::GroupCommitter(Journal& journal, boost::asio::any_io_executor executor,
                               Options options)
    : journal_(journal), strand_(boost::asio::make_strand(executor)), options_(options) {}

GroupCommitter::~GroupCommitter() {
  std::vector<Pending> orphans;
  {
    std::lock_guard lock(mutex_);
    orphans.swap(pending_);
  }
  for (Pending& p : orphans) {
    Complete(std::move(p.handler),
             Err(Errc::kUnavailable, "journal is shutting down; the append was not made"),
             strand_.get_inner_executor());
  }
}

void GroupCommitter::RunExclusive(ExclusiveWork work, ExclusiveHandler handler) {
  auto run = [this, work = std::move(work), handler = std::move(handler)]() mutable {
    Result<void> result = work(journal_);
    auto executor = boost::asio::get_associated_executor(handler, strand_.get_inner_executor());
    auto call = [handler = std::move(handler), result = std::move(result)]() mutable {
      std::move(handler)(std::move(result));
    };
    boost::asio::dispatch(executor, std::move(call));
  };
  boost::asio::post(strand_, std::move(run));
}

void GroupCommitter::Enqueue(AppendRequest request, Handler handler) {
  bool schedule = false;
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(Pending{std::move(request), std::move(handler)});
    if (!flush_scheduled_) {
      flush_scheduled_ = true;
      schedule = true;
    }
  }
  if (schedule) boost::asio::post(strand_, [this] { Flush(); });
}

void GroupCommitter::Flush() {
  std::vector<Pending> group;
  {
    std::lock_guard lock(mutex_);
    if (pending_.size() <= options_.max_group) {
      group.swap(pending_);
      flush_scheduled_ = false;
    } else {
      // Take the oldest max_group; the rest stay queued for the next flush (still scheduled).
      // Only move-constructed, never erased from the front: that move-assigns the handlers,
      // and Boost 1.81's any_completion_handler move-assignment recurses until the stack
      // overflows (decision 16; it crashed a server recovering more than 512 runs at once).
      std::vector<Pending> rest;
      rest.reserve(pending_.size() - options_.max_group);
      for (std::size_t i = options_.max_group; i < pending_.size(); ++i) {
        rest.push_back(std::move(pending_[i]));
      }
      while (pending_.size() > options_.max_group) pending_.pop_back();
      group.swap(pending_);
      pending_.swap(rest);
      boost::asio::post(strand_, [this] { Flush(); });
    }
  }
  if (group.empty()) return;
  std::vector<const AppendRequest*> requests;
  requests.reserve(group.size());
  for (const Pending& p : group) requests.push_back(&p.request);
  const auto started = options_.on_commit ? std::chrono::steady_clock::now()
                                           : std::chrono::steady_clock::time_point();
  std::vector<Result<AppendAck>> results = journal_.AppendGroup(requests);
  if (options_.on_commit) {
    options_.on_commit(group.size(), std::chrono::steady_clock::now() - started);
  }
  commits_.fetch_add(1, std::memory_order_relaxed);
  appends_.fetch_add(group.size(), std::memory_order_relaxed);
  for (std::size_t i = 0; i < group.size(); ++i) {
    Complete(std::move(group[i].handler), std::move(results[i]), strand_.get_inner_executor());
  }
}

Result<AppendAck> GroupCommitter::Append(AppendRequest request) {
  std::promise<Result<AppendAck>> promise;
  auto done = promise.get_future();
  AsyncAppend(std::move(request),
              [&promise](Result<AppendAck> result) { promise.set_value(std::move(result)); });
  return done.get();
}

}  // namespace reckon::storage
