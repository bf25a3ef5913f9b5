// outbox_bench: the outbox dispatcher (outbox/dispatcher.h) delivering to a real nats-server
// with JetStream (file storage) that this program starts, from a real journal on the disk
// under test (synchronous=FULL). Two figures, beside the fsync floor of the same run:
//
//   drain    N messages committed beforehand (each in its own run's step, as a workflow's
//            publish writes it; 256 runs per commit to fill quickly), then the dispatcher
//            starts on its thread: messages per second until every ack is recorded.
//   latency  one message at a time: its step commits (one durable append), the dispatcher is
//            woken as the host's sink wakes it, and the broker's ack reaches the dispatcher:
//            p50/p99 from the commit's return to the ack, and to the ack's record.
//
//   outbox_bench --dir DIR [--messages N] [--latency-samples M] [--rounds R]
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <sys/resource.h>

#include "bench/fsync_floor.h"
#include "bench/machine.h"
#include "bench/nats_broker.h"
#include "reckon/outbox/dispatcher.h"
#include "reckon/outbox/nats_publisher.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/sqlite/sqlite_outbox_store.h"

namespace {

using namespace reckon;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// The NatsPublisher, noting when each message's ack came back.
class TimedPublisher final : public outbox::Publisher {
 public:
  explicit TimedPublisher(std::string url) : nats_(outbox::NatsPublisherOptions{.url = url}) {}
  Result<outbox::PublishAck> Publish(std::string_view subject, std::string_view message_id,
                                     std::string_view payload) override {
    auto ack = nats_.Publish(subject, message_id, payload);
    if (ack) {
      std::lock_guard lock(mutex_);
      acked_at_[std::string(message_id)] = SteadyClock::now();
      acked_.notify_all();
    }
    return ack;
  }
  SteadyClock::time_point WaitForAck(const std::string& message_id) {
    std::unique_lock lock(mutex_);
    acked_.wait(lock, [&] { return acked_at_.contains(message_id); });
    return acked_at_[message_id];
  }

 private:
  outbox::NatsPublisher nats_;
  std::mutex mutex_;
  std::condition_variable acked_;
  std::map<std::string, SteadyClock::time_point> acked_at_;  // guarded by mutex_
};

storage::AppendRequest PublishStep(const std::string& tag, int n) {
  storage::AppendRequest request;
  request.run = {"bench-" + tag + "-" + std::to_string(n), "r1"};
  request.expected_next_seq = 1;
  request.now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  request.workflow_type = "bench";
  request.events.push_back(storage::WorkflowStarted{"bench", "{}", "", ""});
  request.events.push_back(storage::MarkerRecorded{"publish#1", "publish", "{}"});
  request.outbox.push_back(storage::OutboxMessage{"msg_" + tag + "_" + std::to_string(n),
                                                  "publish#1", "bench.out",
                                                  R"({"order":"o-1","cents":4200})"});
  return request;
}

void Check(const Result<void>& result, const char* what) {
  if (!result) {
    std::fprintf(stderr, "%s: %s\n", what, result.error().ToString().c_str());
    std::exit(1);
  }
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

struct Setup {
  std::unique_ptr<storage::SqliteJournal> journal;
  std::unique_ptr<outbox::Dispatcher> dispatcher;
  TimedPublisher* publisher = nullptr;
};

Setup Open(const std::string& dir, const std::string& url) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(dir + "/outbox.db" + suffix);
  storage::SqliteJournalOptions options;
  options.check_at_open = false;
  auto journal = storage::SqliteJournal::Open(dir + "/outbox.db", options);
  if (!journal) {
    std::fprintf(stderr, "journal: %s\n", journal.error().ToString().c_str());
    std::exit(1);
  }
  auto store = storage::SqliteOutboxStore::Open(dir + "/outbox.db", nullptr);
  if (!store) {
    std::fprintf(stderr, "outbox store: %s\n", store.error().ToString().c_str());
    std::exit(1);
  }
  auto publisher = std::make_unique<TimedPublisher>(url);
  Setup setup;
  setup.publisher = publisher.get();
  setup.journal = std::move(journal).value();
  setup.dispatcher = std::make_unique<outbox::Dispatcher>(std::move(store).value(),
                                                          std::move(publisher));
  return setup;
}

double ProcessCpuUs() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + usage.ru_utime.tv_usec +
         usage.ru_stime.tv_usec;
}

struct DrainResult {
  double per_s = 0;
  double cpu_us_per_message = 0;  // this process: the dispatcher's thread and libnats's
};

DrainResult Drain(const std::string& dir, const std::string& url, const std::string& tag, int count) {
  Setup s = Open(dir, url);
  for (int first = 0; first < count; first += 256) {
    std::vector<storage::AppendRequest> requests;
    for (int n = first; n < std::min(count, first + 256); ++n) requests.push_back(PublishStep(tag, n));
    std::vector<const storage::AppendRequest*> pointers;
    for (const auto& r : requests) pointers.push_back(&r);
    for (auto& result : s.journal->AppendGroup(pointers)) {
      if (!result) Check(result.error(), "append");
    }
  }
  const auto start = SteadyClock::now();
  const double cpu0 = ProcessCpuUs();
  s.dispatcher->Start();
  while (s.dispatcher->stats().acked < count) std::this_thread::sleep_for(1ms);
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const double cpu = ProcessCpuUs() - cpu0;
  s.dispatcher->Stop();
  return DrainResult{count / seconds, cpu / count};
}

struct Latency {
  std::vector<double> to_ack_ms, to_record_ms;
};

Latency Serial(const std::string& dir, const std::string& url, const std::string& tag,
               int samples) {
  Setup s = Open(dir, url);
  s.dispatcher->Start();
  Latency out;
  for (int n = 0; n < samples; ++n) {
    auto request = PublishStep(tag, n);
    auto appended = s.journal->Append(request);
    if (!appended) Check(appended.error(), "append");
    const auto committed = SteadyClock::now();
    s.dispatcher->Notify();
    const auto acked = s.publisher->WaitForAck(request.outbox[0].message_id);
    while (s.dispatcher->stats().acked < n + 1) std::this_thread::yield();
    const auto recorded = SteadyClock::now();
    out.to_ack_ms.push_back(std::chrono::duration<double, std::milli>(acked - committed).count());
    out.to_record_ms.push_back(
        std::chrono::duration<double, std::milli>(recorded - committed).count());
  }
  s.dispatcher->Stop();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"outbox_bench: the outbox dispatcher to NATS JetStream, throughput and latency"};
  std::string dir = std::filesystem::current_path().string();
  int messages = 20000, samples = 500, rounds = 2;
  app.add_option("--dir", dir, "scratch directory on the disk to measure");
  app.add_option("--messages", messages, "drain: messages committed beforehand");
  app.add_option("--latency-samples", samples, "latency: messages one at a time");
  app.add_option("--rounds", rounds, "rounds of both");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  spdlog::set_level(spdlog::level::err);
  std::printf("%s\n", bench::DescribeMachine(dir).c_str());
  const auto floor = bench::MeasureFsyncFloor(dir, 2000);
  std::printf("floor: 4 KiB write + fdatasync: mean %.1f us, p50 %.1f us, p99 %.1f us\n",
              floor.mean_us, floor.p50_us, floor.p99_us);
  bench::NatsBroker broker(dir, "BENCH", "bench.>");
  const std::string tag = std::to_string(std::random_device{}());
  for (int round = 1; round <= rounds; ++round) {
    const DrainResult d = Drain(dir, broker.url(), tag + "d" + std::to_string(round), messages);
    std::printf("round %d drain: %d messages acked and recorded at %.0f messages/s (= %.2f per "
                "fsync-floor interval), %.1f us CPU per message in this process\n",
                round, messages, d.per_s, d.per_s * floor.mean_us / 1e6, d.cpu_us_per_message);
    const Latency l = Serial(dir, broker.url(), tag + "l" + std::to_string(round), samples);
    const double p50 = Percentile(l.to_ack_ms, 0.5), p99 = Percentile(l.to_ack_ms, 0.99);
    std::printf("round %d latency, one at a time (%d): commit -> broker ack p50 %.3f ms p99 %.3f "
                "ms (p50 = %.2f x fsync floor); commit -> ack recorded p50 %.3f ms p99 %.3f ms\n",
                round, samples, p50, p99, p50 * 1000 / floor.mean_us,
                Percentile(l.to_record_ms, 0.5), Percentile(l.to_record_ms, 0.99));
  }
  return 0;
}
