// payload_codec_bench: what sealing payloads at rest (AES-256-GCM, storage/crypto/) costs.
//
//   per event   EncodeStoredEvent and EventDecoder::Decode of one OperationCommitted whose
//               result is N bytes, in the clear (the floor: what every journal pays) and sealed;
//               CPU nanoseconds of this thread per event, and the difference
//   journal     appends of an engine-like transition (two events with a JSON payload and one
//               operation row), 32 per commit, clear and sealed in alternating rounds:
//               synchronous=FULL (next to the fsync floor) and synchronous=OFF (CPU alone);
//               appends/s and this thread's CPU time per append
//
// Usage: payload_codec_bench [--dir DIR] [--events N] [--seconds S] [--rounds R]
#include <CLI/CLI.hpp>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "bench/fsync_floor.h"
#include "bench/machine.h"
#include "bench/refund_transition.h"
#include "reckon/storage/crypto/aes_gcm_codec.h"
#include "reckon/storage/event_codec.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

namespace {

using namespace reckon::storage;
using Clock = std::chrono::steady_clock;

std::unique_ptr<AesGcmCodec> BenchCodec() {
  std::random_device random;
  std::array<unsigned char, 32> bytes;
  for (auto& b : bytes) b = static_cast<unsigned char>(random());
  PayloadKeySet keys;
  keys.keys.emplace_back("bench", bytes);
  keys.source = "(in memory)";
  return std::move(AesGcmCodec::Create(std::move(keys))).value();
}

std::string JsonOfSize(std::size_t n) {
  std::string text = R"({"refund_id":"re_1","note":")";
  text += std::string(n > text.size() + 2 ? n - text.size() - 2 : 0, 'n');
  return text + "\"}";
}

// CPU time of this thread: the machine is shared, and wall time would count other processes.
double ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct PerEvent {
  double encode_ns = 0;
  double decode_ns = 0;
};

PerEvent Measure(const EventBody& body, const PayloadCodec* codec, int events) {
  EventDecoder decoder(codec);
  std::string stored;
  PerEvent out;
  double start = ThreadCpuNs();
  for (int i = 0; i < events; ++i) {
    stored = std::move(EncodeStoredEvent(body, EventPlace{"wf-1", "r1", i + 1}, codec)).value();
  }
  out.encode_ns = (ThreadCpuNs() - start) / events;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(stored.data()),
                                         stored.size());
  start = ThreadCpuNs();
  for (int i = 0; i < events; ++i) {
    if (!decoder.Decode(bytes, EventPlace{"wf-1", "r1", events})) std::exit(1);
  }
  out.decode_ns = (ThreadCpuNs() - start) / events;
  return out;
}

void PerEventTable(const PayloadCodec& codec, int events) {
  std::printf("\nper event (%d events each, thread CPU time)\n", events);
  std::printf("| result bytes | encode clear ns | encode sealed ns | +ns | decode clear ns | "
              "decode sealed ns | +ns |\n|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t size : {64u, 1024u, 16384u}) {
    const EventBody body =
        OperationCommitted{"op-1", 1, JsonOfSize(size), "re_1", CommitSource::kAttempt};
    Measure(body, &codec, events / 10);  // warm-up
    const PerEvent clear = Measure(body, nullptr, events);
    const PerEvent sealed = Measure(body, &codec, events);
    std::printf("| %zu | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", size, clear.encode_ns,
                sealed.encode_ns, sealed.encode_ns - clear.encode_ns, clear.decode_ns,
                sealed.decode_ns, sealed.decode_ns - clear.decode_ns);
  }
}

using reckon::bench::RefundTransition;

struct Rate {
  double per_second = 0;
  double cpu_us = 0;  // CPU time of this thread per append (user and system)
};

// Appends per second for `seconds`, 32 transitions (of 32 runs) per commit.
Rate AppendsPerSecond(const std::string& path, const PayloadCodec* codec,
                        SqliteJournalOptions::Sync sync, double seconds) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  SqliteJournalOptions options;
  options.sync = sync;
  options.payload_codec = codec;
  auto journal = std::move(SqliteJournal::Open(path, options)).value();
  constexpr int kGroup = 32;
  std::vector<std::int64_t> next(kGroup, 1);
  std::int64_t appends = 0;
  const double cpu_start = ThreadCpuNs();
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    std::vector<AppendRequest> batch;
    for (int run = 0; run < kGroup; ++run) batch.push_back(RefundTransition(run, next[run]));
    std::vector<const AppendRequest*> pointers;
    for (const AppendRequest& r : batch) pointers.push_back(&r);
    auto results = journal->AppendGroup(pointers);
    for (int run = 0; run < kGroup; ++run) {
      if (!results[run]) {
        std::fprintf(stderr, "%s\n", results[run].error().ToString().c_str());
        std::exit(1);
      }
      next[run] = results[run].value().next_seq;
    }
    appends += kGroup;
  }
  return Rate{appends / std::chrono::duration<double>(Clock::now() - start).count(),
              (ThreadCpuNs() - cpu_start) / 1000 / appends};
}

void JournalTable(const std::string& dir, const PayloadCodec& codec, double seconds, int rounds) {
  const std::string path = dir + "/payload_codec_bench.db";
  const AppendRequest sample = RefundTransition(7, 42);
  for (const EventBody& body : sample.events) {
    const EventPlace place{sample.run.workflow_id, sample.run.run_id, 42};
    std::printf("\n%s stored: %zu bytes clear, %zu bytes sealed", EventTypeName(body).data(),
                EncodeEventBody(body).size(),
                EncodeStoredEvent(body, place, &codec).value().size());
  }
  std::printf("\n");
  std::printf("\njournal: 32 transitions per commit (2 events + 1 row each), %.0f s per cell\n",
              seconds);
  std::printf("| sync | round | clear appends/s | sealed appends/s | sealed / clear | "
              "clear CPU us/append | sealed CPU us/append | + us |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (auto [sync, name] : {std::pair{SqliteJournalOptions::Sync::kFull, "FULL"},
                            std::pair{SqliteJournalOptions::Sync::kOff, "OFF"}}) {
    for (int round = 1; round <= rounds; ++round) {
      const Rate clear = AppendsPerSecond(path, nullptr, sync, seconds);
      const Rate sealed = AppendsPerSecond(path, &codec, sync, seconds);
      std::printf("| %s | %d | %.0f | %.0f | %.3f | %.1f | %.1f | %.1f |\n", name, round,
                  clear.per_second, sealed.per_second, sealed.per_second / clear.per_second,
                  clear.cpu_us, sealed.cpu_us, sealed.cpu_us - clear.cpu_us);
    }
  }
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"payload_codec_bench: the cost of sealing payloads at rest"};
  std::string dir = std::filesystem::current_path().string();
  int events = 200000;
  double seconds = 3;
  int rounds = 2;
  app.add_option("--dir", dir, "scratch directory on the disk to measure");
  app.add_option("--events", events, "events per per-event measurement");
  app.add_option("--seconds", seconds, "seconds per journal cell");
  app.add_option("--rounds", rounds, "alternating clear/sealed rounds per sync mode");
  CLI11_PARSE(app, argc, argv);
  std::printf("%s\n", reckon::bench::DescribeMachine(dir).c_str());
  auto floor = reckon::bench::MeasureFsyncFloor(dir, 1000);
  std::printf("floor: 4 KiB write + fdatasync: mean %.1f us, p50 %.1f us, p99 %.1f us\n",
              floor.mean_us, floor.p50_us, floor.p99_us);
  auto codec = BenchCodec();
  PerEventTable(*codec, events);
  JournalTable(dir, *codec, seconds, rounds);
  return 0;
}
