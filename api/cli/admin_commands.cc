#include "reckon/api/cli/admin_commands.h"

#include <boost/json.hpp>

#include <memory>
#include <ostream>

#include "reckon/api/cli/archive_command.h"
#include "reckon/storage/sqlite/journal_check.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;

struct CheckArgs {
  std::string journal;
  bool json = false;
};

void PrintText(std::ostream& out, const storage::JournalCheckReport& r) {
  out << "journal:        " << r.path << "\n"
      << "schema version: " << r.schema_version << "\n"
      << "runs:           " << r.runs << "\n"
      << "events:         " << r.events << "\n"
      << "operations:     " << r.operations << "\n"
      << "owner:          " << (r.owner.empty() ? "none" : r.owner) << "\n"
      << "integrity:      " << (r.ok() ? "ok" : "DAMAGED") << "\n";
  for (const std::string& problem : r.problems) out << "  " << problem << "\n";
}

void PrintJson(std::ostream& out, const storage::JournalCheckReport& r) {
  json::array problems;
  for (const std::string& problem : r.problems) problems.emplace_back(problem);
  json::object object{{"journal", r.path},         {"schema_version", r.schema_version},
                      {"runs", r.runs},            {"events", r.events},
                      {"operations", r.operations}, {"owner", r.owner},
                      {"ok", r.ok()},              {"problems", std::move(problems)}};
  out << json::serialize(object) << "\n";
}

Result<void> RunCheck(CommandEnv& env, const CheckArgs& args) {
  RECKON_TRY(storage::JournalCheckReport report, storage::CheckJournal(args.journal));
  if (args.json) {
    PrintJson(env.out, report);
  } else {
    PrintText(env.out, report);
  }
  env.out.flush();
  if (!report.ok()) {
    env.err << "reckon admin check: journal '" << report.path << "' is damaged ("
            << report.problems.front() << (report.problems.size() > 1 ? ", ..." : "")
            << "); restore it from a backup\n";
    env.exit_code = kExitFailure;
  }
  return Ok();
}

}  // namespace

void AddAdminCommands(CLI::App& app, CommandEnv& env) {
  CLI::App* admin = app.add_subcommand("admin", "Operator commands on a journal file");
  admin->require_subcommand(1);
  auto args = std::make_shared<CheckArgs>();
  CLI::App* check = admin->add_subcommand(
      "check", "Check a journal's integrity (read-only; works while its owner runs)");
  check->add_option("journal", args->journal, "the journal file")->required();
  check->add_flag("--json", args->json, "print one JSON object");
  check->callback([&env, args] {
    if (auto result = RunCheck(env, *args); !result) {
      ReportError(env, "admin check", result.error());
    }
  });
  AddArchiveCommand(*admin, env);
}

}  // namespace reckon::cli
