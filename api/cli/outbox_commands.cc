#include "reckon/api/cli/outbox_commands.h"

#include <boost/json.hpp>

#include <filesystem>
#include <memory>
#include <ostream>

#include "reckon/storage/sqlite/sqlite_outbox_store.h"

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
  if (!std::filesystem::exists(args.journal)) {
    return Err(Errc::kNotFound, "journal '" + args.journal + "' does not exist");
  }
  RECKON_TRY(auto store, storage::SqliteOutboxStore::Open(args.journal, nullptr));
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

}  // namespace

void AddOutboxCommands(CLI::App& app, CommandEnv& env) {
  CLI::App* outbox = app.add_subcommand("outbox", "The transactional outbox of a journal file");
  outbox->require_subcommand(1);
  auto args = std::make_shared<ListArgs>();
  CLI::App* list = outbox->add_subcommand(
      "list", "Messages with their attempts, acks and last error (works while the owner runs)");
  list->add_option("journal", args->journal, "the journal file")->required();
  list->add_flag("--pending", args->pending, "only messages the broker has not acknowledged");
  list->add_flag("--json", args->json, "one JSON object per line");
  list->add_option("--limit", args->limit, "at most this many messages")->capture_default_str();
  list->callback([&env, args] {
    if (auto result = RunList(env, *args); !result) {
      ReportError(env, "outbox list", result.error());
    }
  });
}

}  // namespace reckon::cli
