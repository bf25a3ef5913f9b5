// reckon-outbox-consumer: the consumer end of the transactional outbox (ARCHITECTURE.md,
// decision 41) as a program. It reads a JetStream stream through a durable pull consumer with
// explicit acks, and for every message, in this order:
//
//   1. DedupConsumer::Process (dedup_consumer.h): in ONE SQLite transaction of its own
//      database, the processed-id row (by the Nats-Msg-Id header, the outbox's message id) and
//      the business write, a row in `effects` (message id, subject, payload, stream sequence,
//      deliveries). A message whose id was processed before is skipped, and the skipped copy
//      is counted in the same database, so the count survives a SIGKILL;
//   2. then the ack, confirmed by the broker.
//
// A crash between 1 and 2 makes the broker deliver the message again (after the ack wait); the
// copy is skipped. `effects` has no unique key on the message id on purpose: a message
// processed twice would show as two rows, which is what a test of exactly-once looks for.
//
//   reckon-outbox-consumer --nats-url nats://HOST:PORT --stream NAME --subject FILTER
//                          --durable NAME --db PATH [--ack-wait-ms N] [--batch N]
//                          [--work-ms N]
//   reckon-outbox-consumer --report --db PATH [--json]
//
// --work-ms stands for the business work: each effect's transaction stays open that long
// (tests use it so that a kill can land while messages are in hand).
//
// --report prints what the database holds and exits: `processed N`, `duplicates_skipped N`
// (every life's skipped copies), `effects N` (business rows) and `effect_ids N` (distinct
// ids among them), one per line, or one JSON object with --json. Exit 1 if there is no
// database at PATH.
//
// Running: until SIGTERM or SIGINT, then exit 0 (the message in hand is finished first). The
// durable consumer is created with the --subject filter and --ack-wait-ms if the stream has
// none of that name; an existing one is bound as it is. A broker that is unreachable, at the
// start or later, is waited for forever: the client reconnects on its own, and the program
// says so on stderr (at most every 5 s) while it waits. It exits 1 when an operator must
// act: the stream does not exist, the broker refuses the consumer, or the database fails (a
// message that was not acked is delivered again to the next life). Bad or missing flags: exit
// 2 with a message naming the flag. Messages without a Nats-Msg-Id header are not from an
// outbox: they are reported and terminated (never delivered again).
#include <CLI/CLI.hpp>
#include <boost/json.hpp>

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "samples/outbox_consumer/dedup_consumer.h"
#include "samples/outbox_consumer/jetstream_pull.h"

namespace reckon::samples {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr std::string_view kEffectsSchema =
    "CREATE TABLE IF NOT EXISTS effects ("
    "  id INTEGER PRIMARY KEY,"
    "  message_id TEXT NOT NULL,"  // not unique: a second processing must show
    "  subject TEXT NOT NULL,"
    "  payload TEXT NOT NULL,"
    "  stream_seq INTEGER NOT NULL,"
    "  deliveries INTEGER NOT NULL,"
    "  applied_at_us INTEGER NOT NULL)";

struct Flags {
  JetStreamPullOptions pull;
  std::string db;
  int ack_wait_ms = 30000;
  int batch = 32;
  int work_ms = 0;
  bool report = false;
  bool json = false;
};

void Say(const std::string& text) {
  std::fprintf(stderr, "reckon-outbox-consumer: %s\n", text.c_str());
}

// --- the report ------------------------------------------------------------------------------

int Report(const Flags& flags) {
  if (!std::filesystem::exists(flags.db)) {
    Say("no database at '" + flags.db + "' (nothing was consumed into it yet)");
    return 1;
  }
  auto consumer = DedupConsumer::Open(flags.db, kEffectsSchema);
  if (!consumer) {
    Say(consumer.error().ToString());
    return 1;
  }
  storage::SqliteDb& db = consumer.value()->db();
  auto processed = consumer.value()->ProcessedCount();
  auto skipped = consumer.value()->SkippedCopiesTotal();
  auto effects = db.QueryInt("SELECT count(*) FROM effects");
  auto ids = db.QueryInt("SELECT count(DISTINCT message_id) FROM effects");
  for (const Result<std::int64_t>* r : {&processed, &skipped, &effects, &ids}) {
    if (!*r) {
      Say(r->error().ToString());
      return 1;
    }
  }
  if (flags.json) {
    boost::json::object out{{"processed", processed.value()},
                            {"duplicates_skipped", skipped.value()},
                            {"effects", effects.value()},
                            {"effect_ids", ids.value()}};
    std::printf("%s\n", boost::json::serialize(out).c_str());
  } else {
    std::printf("processed %lld\nduplicates_skipped %lld\neffects %lld\neffect_ids %lld\n",
                static_cast<long long>(processed.value()), static_cast<long long>(skipped.value()),
                static_cast<long long>(effects.value()), static_cast<long long>(ids.value()));
  }
  return 0;
}

// --- consuming -------------------------------------------------------------------------------

// SIGTERM and SIGINT stay blocked (in every thread, libnats's included, which inherit the
// mask) and are taken here: true when one arrived within `wait`.
bool StopArrived(const sigset_t& stop_signals, std::chrono::milliseconds wait) {
  const auto ns = std::chrono::nanoseconds(wait).count();
  timespec timeout{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  return sigtimedwait(&stop_signals, nullptr, &timeout) > 0;
}

// Says `text` on stderr unless it said the same less than 5 s ago.
class Complaints {
 public:
  void Note(const std::string& text) {
    const auto now = SteadyClock::now();
    if (text == last_ && now - said_at_ < 5s) return;
    last_ = text;
    said_at_ = now;
    Say(text);
  }

 private:
  std::string last_;
  SteadyClock::time_point said_at_{};
};

Result<void> ApplyEffect(storage::SqliteDb& db, const PulledMessage& msg, std::string_view payload,
                         std::chrono::milliseconds work) {
  RECKON_TRY(storage::Statement insert,
             db.Prepare("INSERT INTO effects (message_id, subject, payload, stream_seq, "
                        "deliveries, applied_at_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  const auto now = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  insert.Bind(1, msg.message_id()).Bind(2, msg.subject()).Bind(3, payload);
  insert.Bind(4, msg.stream_seq()).Bind(5, msg.delivered()).Bind(6, static_cast<std::int64_t>(now));
  RECKON_TRY(insert.Run());
  if (work.count() > 0) std::this_thread::sleep_for(work);
  return Ok();
}

struct LifeCounts {
  std::int64_t processed = 0, skipped = 0, unacked = 0, terminated = 0;
};

// Processes, then acks, one message. Errors: the database's (the caller stops; the message is
// not acked and comes back to the next life).
Result<void> Handle(DedupConsumer& consumer, PulledMessage& msg, std::chrono::milliseconds work,
                    LifeCounts& counts) {
  const std::string id = msg.message_id();
  if (id.empty()) {
    Say("message " + std::to_string(msg.stream_seq()) + " on '" + msg.subject() +
        "' has no Nats-Msg-Id header (not from an outbox); terminated");
    msg.Term();
    ++counts.terminated;
    return Ok();
  }
  auto write = [&msg, work](storage::SqliteDb& db, std::string_view payload) {
    return ApplyEffect(db, msg, payload, work);
  };
  RECKON_TRY(bool processed, consumer.Process(id, msg.data(), write));
  ++(processed ? counts.processed : counts.skipped);
  if (auto acked = msg.Ack(); !acked) {
    ++counts.unacked;  // delivered again later, and skipped then
    Say("message " + id + ": " + acked.error().message() + "; it will come again and be skipped");
  }
  return Ok();
}

int Consume(const Flags& flags, const sigset_t& stop_signals) {
  auto consumer = DedupConsumer::Open(flags.db, kEffectsSchema);
  if (!consumer) {
    Say(consumer.error().ToString());
    return 1;
  }
  JetStreamPullOptions pull_options = flags.pull;
  pull_options.ack_wait = std::chrono::milliseconds(flags.ack_wait_ms);
  auto pull = JetStreamPull::Connect(pull_options);
  if (!pull) {
    Say(pull.error().message());
    return 2;
  }
  Complaints complaints;
  LifeCounts counts;
  int exit_code = 0;
  while (!StopArrived(stop_signals, 0ms)) {
    if (!pull.value()->bound()) {
      auto bound = pull.value()->Bind();
      if (!bound && bound.error().code() == Errc::kUnavailable) {
        complaints.Note("waiting for the broker: " + bound.error().message());
        if (StopArrived(stop_signals, 250ms)) break;
        continue;
      }
      if (!bound) {
        Say(bound.error().message());
        exit_code = 1;
        break;
      }
      Say("consuming stream '" + flags.pull.stream + "' as '" + flags.pull.durable + "'");
    }
    auto batch = pull.value()->Fetch(flags.batch, 500ms);
    if (!batch) {
      complaints.Note(batch.error().message());
      if (StopArrived(stop_signals, 100ms)) break;
      continue;
    }
    const std::chrono::milliseconds work(flags.work_ms);
    for (PulledMessage& msg : batch.value()) {
      if (auto handled = Handle(*consumer.value(), msg, work, counts); !handled) {
        Say("stopping: " + handled.error().ToString());
        exit_code = 1;
        break;
      }
    }
    if (exit_code != 0) break;
  }
  Say("this life processed " + std::to_string(counts.processed) + ", skipped " +
      std::to_string(counts.skipped) + " duplicate(s), " + std::to_string(counts.unacked) +
      " ack(s) unconfirmed, " + std::to_string(counts.terminated) + " terminated");
  return exit_code;
}

// kInvalidArgument naming the flag, for what CLI11 cannot check.
Result<void> CheckConsumeFlags(const Flags& flags) {
  auto missing = [](const char* flag, const char* what) {
    return Err(Errc::kInvalidArgument, std::string("missing ") + flag + " (" + what + ")");
  };
  if (flags.pull.url.empty()) return missing("--nats-url", "nats://HOST:PORT");
  if (flags.pull.stream.empty()) return missing("--stream", "the stream to read");
  if (flags.pull.subject.empty()) return missing("--subject", "the filter subject, e.g. orders.>");
  if (flags.pull.durable.empty()) return missing("--durable", "the durable consumer's name");
  for (const auto& [flag, name] : {std::pair{"--stream", &flags.pull.stream},
                                   std::pair{"--durable", &flags.pull.durable}}) {
    if (name->find_first_of(". *>\t") != std::string::npos) {
      return Err(Errc::kInvalidArgument, std::string(flag) + " '" + *name +
                                             "' may not contain '.', '*', '>' or spaces");
    }
  }
  return Ok();
}

int Main(int argc, char** argv) {
  CLI::App app("reckon-outbox-consumer: processes an outbox's messages from NATS JetStream "
               "exactly once into its own SQLite database.",
               "reckon-outbox-consumer");
  Flags flags;
  app.add_option("--nats-url", flags.pull.url, "the broker, nats://HOST:PORT");
  app.add_option("--stream", flags.pull.stream, "the JetStream stream (declared by the operator)");
  app.add_option("--subject", flags.pull.subject, "the consumer's filter subject");
  app.add_option("--durable", flags.pull.durable, "the durable consumer's name");
  app.add_option("--db", flags.db, "the consumer's SQLite database")->required();
  app.add_option("--ack-wait-ms", flags.ack_wait_ms, "redelivery delay of an unacked message")
      ->check(CLI::Range(100, 3'600'000))
      ->capture_default_str();
  app.add_option("--batch", flags.batch, "messages fetched at once")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--work-ms", flags.work_ms, "simulated business work per message, in its "
                 "transaction")
      ->check(CLI::Range(0, 60'000))
      ->capture_default_str();
  app.add_flag("--report", flags.report, "print what the database holds and exit");
  app.add_flag("--json", flags.json, "with --report: one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    Say(std::string(e.what()) + "; see --help");
    return 2;
  }
  if (flags.report) return Report(flags);
  if (auto checked = CheckConsumeFlags(flags); !checked) {
    Say(checked.error().message() + "; see --help");
    return 2;
  }
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // before libnats starts its threads
  return Consume(flags, stop_signals);
}

}  // namespace
}  // namespace reckon::samples

int main(int argc, char** argv) { return reckon::samples::Main(argc, argv); }
