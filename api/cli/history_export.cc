#include "reckon/api/cli/history_export.h"

#include <boost/json.hpp>

#include <ostream>

#include "reckon/protocol/wire_convert.h"
#include "reckon/storage/backend/open_backend.h"
#include "reckon/storage/crypto/aes_gcm_codec.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;
namespace wire = api::wire;
using api::Str;

struct RunIdentity {
  std::string run_id;
  std::string workflow_type;
};

Result<RunIdentity> DescribeRun(const RemoteFlags& remote, const std::string& workflow_id,
                                const std::string& run_id) {
  auto request = NewRequest();
  auto key = request->getRoot<wire::Request>().initMethod().initDescribeWorkflow();
  key.setWorkflowId(workflow_id);
  key.setRunId(run_id);
  RECKON_TRY(api::Reply reply, CallServer(remote, std::move(request)));
  auto summary = reply.get().getResult().getWorkflow().getSummary();
  return RunIdentity{Str(summary.getRunId()), Str(summary.getWorkflowType())};
}

}  // namespace

Result<storage::HistoryFile> FetchServerHistory(const RemoteFlags& remote,
                                                const std::string& workflow_id,
                                                const std::string& run_id) {
  RECKON_TRY(RunIdentity before, DescribeRun(remote, workflow_id, run_id));
  auto request = NewRequest();
  auto key = request->getRoot<wire::Request>().initMethod().initGetHistory();
  key.setWorkflowId(workflow_id);
  key.setRunId(run_id);
  RECKON_TRY(api::Reply reply, CallServer(remote, std::move(request)));
  storage::EventDecoder decoder;
  RECKON_TRY(std::vector<storage::Event> events,
             api::EventsFromWire(reply.get().getResult().getHistory(), decoder));
  if (!run_id.empty()) {  // a named run: no newer run can take its place while it is read
    return storage::HistoryFile{workflow_id, before.run_id, before.workflow_type,
                                std::move(events)};
  }
  RECKON_TRY(RunIdentity after, DescribeRun(remote, workflow_id, run_id));
  if (after.run_id != before.run_id) {
    return Err(Errc::kConflict, "a new run of '" + workflow_id + "' (run " + after.run_id +
                                    ") started while its history was exported; export again");
  }
  return storage::HistoryFile{workflow_id, before.run_id, before.workflow_type,
                              std::move(events)};
}

Result<storage::HistoryFile> ReadJournalHistory(const std::string& journal,
                                                const std::string& payload_key,
                                                const std::string& workflow_id,
                                                const std::string& run_id) {
  if (storage::BackendOf(journal) != storage::BackendKind::kSqlite) {
    return Err(Errc::kInvalidArgument,
               "--journal reads SQLite journal files only; export a PostgreSQL journal's "
               "histories through its server (--server)");
  }
  std::unique_ptr<storage::PayloadCodec> codec;
  if (!payload_key.empty()) {
    RECKON_TRY(codec, storage::OpenPayloadKeyFile(payload_key));
  }
  storage::SqliteJournalOptions options;
  options.mode = storage::SqliteJournalOptions::Mode::kReadOnly;
  options.payload_codec = codec.get();
  RECKON_TRY(auto opened, storage::OpenSqliteJournal(journal, options));
  auto history = run_id.empty() ? storage::ReadLatestHistory(*opened, workflow_id)
                                : storage::ReadRunHistory(*opened, storage::RunRef{workflow_id, run_id});
  if (!history && history.error().code() == Errc::kFailedPrecondition && payload_key.empty()) {
    return history.error().WithContext(
        "the journal's payloads are sealed; pass its key file with --payload-key");
  }
  if (!history) return history.error().WithContext("journal '" + journal + "'");
  return history;
}

Result<void> ExportHistory(CommandEnv& env, const RemoteFlags& remote,
                           const HistoryExportArgs& args) {
  storage::HistoryFile history;
  if (args.journal.empty()) {
    RECKON_TRY(history, FetchServerHistory(remote, args.workflow_id, args.run_id));
  } else {
    RECKON_TRY(history, ReadJournalHistory(args.journal, args.payload_key, args.workflow_id,
                                           args.run_id));
  }
  RECKON_TRY(storage::WriteHistoryFile(args.file, history));
  if (remote.json) {
    json::object out{{"workflow_id", history.workflow_id},
                     {"run_id", history.run_id},
                     {"workflow_type", history.workflow_type},
                     {"events", history.events.size()},
                     {"file", args.file}};
    env.out << json::serialize(out) << "\n";
  } else {
    env.out << "exported " << history.events.size() << " events of " << history.workflow_id
            << " (" << history.workflow_type << ", run " << history.run_id << ") to "
            << args.file << "\n";
  }
  if (!env.out.flush()) return Err(Errc::kUnavailable, "cannot write to standard output");
  return Ok();
}

}  // namespace reckon::cli
