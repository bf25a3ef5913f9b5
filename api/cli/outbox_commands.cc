#include "reckon/api/cli/outbox_commands.h"

#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <ostream>

#include "reckon/outbox/nats_stream.h"
#include "reckon/storage/backend/open_backend.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;

struct ListArgs {
  std::string journal;
  bool pending = false;
  bool json = false;
  std::size_t limit = 1000;
};

void PrintJson(std::ostream& out, const storage::OutboxRow& row) {
  json::object object{{"message_id", row.message_id},
                      {"subject", row.subject},
                      {"step_id", row.step_id},
                      {"run_pk", row.run_pk},
                      {"attempts", row.attempts},
                      {"acked", row.published_at_us != 0},
                      {"stream_seq", row.stream_seq},
                      {"published_at_us", row.published_at_us},
                      {"next_attempt_at_us", row.next_attempt_at_us},
                      {"last_error", row.last_error},
                      {"created_at_us", row.created_at_us}};
  out << json::serialize(object) << "\n";
}

void PrintText(std::ostream& out, const storage::OutboxRow& row) {
  out << row.message_id << "  " << row.subject << "  " << row.step_id
      << "  attempts=" << row.attempts;
  if (row.published_at_us != 0) {
    out << "  acked seq=" << row.stream_seq;
  } else {
    out << "  pending";
    if (row.next_attempt_at_us != 0) out << " next_at_us=" << row.next_attempt_at_us;
    if (!row.last_error.empty()) out << "  last_error: " << row.last_error;
  }
  out << "\n";
}

Result<void> RunList(CommandEnv& env, const ListArgs& args) {
  if (storage::BackendOf(args.journal) == storage::BackendKind::kSqlite &&
      !std::filesystem::exists(args.journal)) {
    return Err(Errc::kNotFound, "journal '" + args.journal + "' does not exist");
  }
  RECKON_TRY(auto store, storage::OpenOutboxStore(args.journal, nullptr));
  RECKON_TRY(auto rows, store->List(args.pending, args.limit));
  for (const storage::OutboxRow& row : rows) {
    if (args.json) {
      PrintJson(env.out, row);
    } else {
      PrintText(env.out, row);
    }
  }
  env.out.flush();
  return Ok();
}

struct StreamArgs {
  std::string name;
  std::string nats_url;
  std::vector<std::string> subjects;
  std::int64_t duplicate_window_ms = 120000;
};

Result<void> RunStream(CommandEnv& env, const StreamArgs& args) {
  outbox::StreamSpec spec;
  spec.url = args.nats_url;
  spec.name = args.name;
  spec.subjects = args.subjects;
  spec.duplicate_window = std::chrono::milliseconds(args.duplicate_window_ms);
  RECKON_TRY(outbox::StreamState state, outbox::DeclareStream(spec));
  std::string subjects;
  for (const std::string& s : args.subjects) subjects += (subjects.empty() ? "" : " ") + s;
  env.out << "stream " << args.name << ": " << outbox::StreamChangeName(state.change)
          << " (subjects " << subjects << ", duplicate window " << args.duplicate_window_ms
          << " ms, " << state.messages << " messages, last seq " << state.last_seq << ")"
          << std::endl;
  return Ok();
}

}  // namespace

void AddOutboxCommands(CLI::App& app, CommandEnv& env) {
  CLI::App* outbox = app.add_subcommand("outbox", "The transactional outbox of a journal file");
  outbox->require_subcommand(1);
  auto args = std::make_shared<ListArgs>();
  CLI::App* list = outbox->add_subcommand(
      "list", "Messages with their attempts, acks and last error (works while the owner runs)");
  list->add_option("journal", args->journal, "the journal file, or postgresql://...")->required();
  list->add_flag("--pending", args->pending, "only messages the broker has not acknowledged");
  list->add_flag("--json", args->json, "one JSON object per line");
  list->add_option("--limit", args->limit, "at most this many messages")->capture_default_str();
  list->callback([&env, args] {
    if (auto result = RunList(env, *args); !result) {
      ReportError(env, "outbox list", result.error());
    }
  });

  auto stream_args = std::make_shared<StreamArgs>();
  CLI::App* stream = outbox->add_subcommand(
      "stream", "Create or update the JetStream stream that stores published subjects (the "
                "dispatcher never creates streams)");
  stream->add_option("name", stream_args->name, "the stream's name")->required();
  stream->add_option("--nats-url", stream_args->nats_url, "nats://HOST:PORT")->required();
  stream->add_option("--subjects", stream_args->subjects,
                     "subjects or wildcards it stores, e.g. 'refunds.>'")
      ->required();
  stream->add_option("--duplicate-window-ms", stream_args->duplicate_window_ms,
                     "how long the broker drops a repeated message id")
      ->check(CLI::Range(std::int64_t{1000}, std::int64_t{7} * 24 * 3600 * 1000))
      ->capture_default_str();
  stream->callback([&env, stream_args] {
    if (auto result = RunStream(env, *stream_args); !result) {
      ReportError(env, "outbox stream", result.error());
    }
  });
}

}  // namespace reckon::cli
