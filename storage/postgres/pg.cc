#include "reckon/storage/postgres/pg.h"

#include <endian.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <cstring>
#include <optional>

namespace reckon::storage {
namespace {

// What the caller should do next, by SQLSTATE class (docs: "PostgreSQL Error Codes").
Errc ErrcForSqlState(std::string_view state) {
  if (state.size() != 5) return Errc::kUnavailable;  // no SQLSTATE: libpq lost the server
  const std::string_view cls = state.substr(0, 2);
  if (cls == "08" || cls == "53" || cls == "58" || cls == "57" || cls == "40" ||
      state == "55P03") {
    return Errc::kUnavailable;  // connection, resources, I/O, shutdown, serialization, lock
  }
  if (cls == "23") return Errc::kAlreadyExists;
  if (cls == "22") return Errc::kInvalidArgument;
  if (state == "XX001" || state == "XX002") return Errc::kCorruption;
  return Errc::kInternal;
}

std::string Trimmed(const char* text) {
  std::string out = text ? text : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string Display(const char* user, const char* host, const char* port, const char* db) {
  auto or_empty = [](const char* s) { return std::string(s ? s : ""); };
  return "postgresql://" + or_empty(user) + "@" + or_empty(host) + ":" + or_empty(port) + "/" +
         or_empty(db);
}

// The conninfo as a display string without its password, for a connection that failed.
std::string RedactedConninfo(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (options == nullptr) {
    PQfreemem(error);
    return "(an unreadable connection string)";
  }
  const char *user = nullptr, *host = nullptr, *port = nullptr, *db = nullptr;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (std::strcmp(o->keyword, "user") == 0) user = o->val;
    if (std::strcmp(o->keyword, "host") == 0) host = o->val;
    if (std::strcmp(o->keyword, "hostaddr") == 0 && host == nullptr) host = o->val;
    if (std::strcmp(o->keyword, "port") == 0) port = o->val;
    if (std::strcmp(o->keyword, "dbname") == 0) db = o->val;
  }
  std::string out = Display(user, host, port, db);
  PQconninfoFree(options);
  return out;
}

void PutBigEndian(std::string& buffer, std::int64_t value) {
  const std::uint64_t be = htobe64(static_cast<std::uint64_t>(value));
  buffer.append(reinterpret_cast<const char*>(&be), sizeof be);
}

struct Arrays {
  std::vector<const char*> values;
  std::vector<int> formats;
};

Arrays PointInto(const std::string& buffer, const std::vector<std::size_t>& offsets,
                 const std::vector<int>& lengths) {
  Arrays arrays;
  arrays.values.reserve(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    arrays.values.push_back(lengths[i] < 0 ? nullptr : buffer.data() + offsets[i]);
  }
  arrays.formats.assign(lengths.size(), 1);  // binary
  return arrays;
}

}  // namespace

PgParams& PgParams::Add(std::int64_t value) {
  offsets_.push_back(buffer_.size());
  PutBigEndian(buffer_, value);
  lengths_.push_back(8);
  return *this;
}

PgParams& PgParams::Add(std::string_view text) {
  offsets_.push_back(buffer_.size());
  buffer_.append(text);
  lengths_.push_back(static_cast<int>(text.size()));
  return *this;
}

PgParams& PgParams::AddBytes(std::span<const std::byte> bytes) {
  return Add(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

PgParams& PgParams::AddNull() {
  offsets_.push_back(buffer_.size());
  lengths_.push_back(-1);
  return *this;
}

PgBatch& PgBatch::Sql(std::string sql) {
  items_.push_back(Item{std::move(sql), false, {}});
  return *this;
}

PgBatch& PgBatch::Prepared(std::string name, PgParams params) {
  items_.push_back(Item{std::move(name), true, std::move(params)});
  return *this;
}

void PgResult::Clearer::operator()(pg_result* result) const { PQclear(result); }

int PgResult::rows() const { return PQntuples(result_.get()); }
int PgResult::columns() const { return PQnfields(result_.get()); }
bool PgResult::IsNull(int row, int column) const {
  return PQgetisnull(result_.get(), row, column) != 0;
}

std::int64_t PgResult::Int(int row, int column) const {
  const char* value = PQgetvalue(result_.get(), row, column);
  switch (PQgetlength(result_.get(), row, column)) {
    case 8: {
      std::uint64_t be;
      std::memcpy(&be, value, 8);
      return static_cast<std::int64_t>(be64toh(be));
    }
    case 4: {
      std::uint32_t be;
      std::memcpy(&be, value, 4);
      return static_cast<std::int32_t>(be32toh(be));
    }
    case 2: {
      std::uint16_t be;
      std::memcpy(&be, value, 2);
      return static_cast<std::int16_t>(be16toh(be));
    }
    default:
      return 0;  // NULL
  }
}

std::string_view PgResult::Text(int row, int column) const {
  return {PQgetvalue(result_.get(), row, column),
          static_cast<std::size_t>(PQgetlength(result_.get(), row, column))};
}

std::span<const std::byte> PgResult::Bytes(int row, int column) const {
  return {reinterpret_cast<const std::byte*>(PQgetvalue(result_.get(), row, column)),
          static_cast<std::size_t>(PQgetlength(result_.get(), row, column))};
}

std::int64_t PgResult::affected() const {
  const char* n = PQcmdTuples(result_.get());
  return (n && *n) ? std::stoll(n) : 0;
}

std::string_view PgResult::command() const { return PQcmdStatus(result_.get()); }

void PgConnection::Finisher::operator()(pg_conn* conn) const { PQfinish(conn); }

Result<PgConnection> PgConnection::Connect(const std::string& conninfo) {
  // Defaults first: whatever `conninfo` says overrides them. A connect that hangs, or a server
  // that vanished behind a dead network path, is noticed within about 30 s instead of the
  // kernel's two hours, so the journal fails (kUnavailable) instead of blocking its owner.
  const char* const keywords[] = {"connect_timeout", "keepalives",          "keepalives_idle",
                                  "keepalives_interval", "keepalives_count", "tcp_user_timeout",
                                  "dbname",          nullptr};
  const char* const values[] = {"10", "1", "10", "5", "3", "30000", conninfo.c_str(), nullptr};
  std::unique_ptr<pg_conn, Finisher> conn(PQconnectdbParams(keywords, values, /*expand_dbname=*/1));
  if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
    return Err(Errc::kUnavailable,
               "cannot connect to PostgreSQL at '" + RedactedConninfo(conninfo) + "': " +
                   (conn ? Trimmed(PQerrorMessage(conn.get())) : "out of memory") +
                   "; check that the server runs and the connection string is right");
  }
  // Notices ("relation already exists, skipping") are for people at a console, not our logs.
  PQsetNoticeProcessor(conn.get(), [](void*, const char*) {}, nullptr);
  std::string display =
      Display(PQuser(conn.get()), PQhost(conn.get()), PQport(conn.get()), PQdb(conn.get()));
  PgConnection connection(std::move(conn), std::move(display));
  RECKON_TRY(connection.SetUpSession());
  return connection;
}

Result<void> PgConnection::SetUpSession() {
  char host[256] = {};
  (void)gethostname(host, sizeof host - 1);
  const std::string app = "reckon pid=" + std::to_string(getpid()) + " host=" + host;
  char* quoted = PQescapeLiteral(conn_.get(), app.c_str(), app.size());
  if (quoted == nullptr) return Err(Errc::kInternal, "cannot quote the application name");
  const std::string set_app = std::string("SET application_name = ") + quoted;
  PQfreemem(quoted);
  return Exec("SET client_encoding = 'UTF8'; SET synchronous_commit = on; " + set_app);
}

Result<void> PgConnection::Reconnect() {
  PQreset(conn_.get());
  if (PQstatus(conn_.get()) != CONNECTION_OK) {
    return Err(Errc::kUnavailable, "cannot reconnect to PostgreSQL at '" + display_ + "': " +
                                       Trimmed(PQerrorMessage(conn_.get())));
  }
  return SetUpSession();
}

Result<PgResult> PgConnection::Check(pg_result* raw, std::string_view what) {
  PgResult result(raw);
  const ExecStatusType status = raw ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  const char* state = raw ? PQresultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
  last_sql_state_ = state ? state : "";
  const char* primary = raw ? PQresultErrorField(raw, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  std::string message = primary ? primary : Trimmed(PQerrorMessage(conn_.get()));
  Errc code = ErrcForSqlState(state ? state : "");
  if (broken()) code = Errc::kUnavailable;
  return Err(code, std::string(what) + " on '" + display_ + "': " + message +
                       (state ? " (SQLSTATE " + std::string(state) + ")" : ""));
}

Result<void> PgConnection::Exec(std::string_view sql) {
  RECKON_TRY(Command(sql));
  return Ok();
}

Result<PgResult> PgConnection::Command(std::string_view sql) {
  const std::string text(sql);
  return Check(PQexec(conn_.get(), text.c_str()), "running SQL");
}

Result<PgResult> PgConnection::Query(const std::string& sql, const PgParams& params) {
  const Arrays a = PointInto(params.buffer_, params.offsets_, params.lengths_);
  return Check(PQexecParams(conn_.get(), sql.c_str(), params.size(), nullptr, a.values.data(),
                            params.lengths_.data(), a.formats.data(), 1),
               "running a query");
}

Result<void> PgConnection::Prepare(const std::string& name, const std::string& sql) {
  RECKON_TRY(Check(PQprepare(conn_.get(), name.c_str(), sql.c_str(), 0, nullptr),
                   "preparing statement '" + name + "'"));
  return Ok();
}

Result<PgResult> PgConnection::Run(const std::string& name, const PgParams& params) {
  const Arrays a = PointInto(params.buffer_, params.offsets_, params.lengths_);
  return Check(PQexecPrepared(conn_.get(), name.c_str(), params.size(), a.values.data(),
                              params.lengths_.data(), a.formats.data(), 1),
               "running statement '" + name + "'");
}

bool PgConnection::broken() const { return PQstatus(conn_.get()) == CONNECTION_BAD; }


Error PgConnection::ClientError(std::string_view what) const {
  return Err(Errc::kUnavailable, std::string(what) + " on '" + display_ + "': " +
                                     Trimmed(PQerrorMessage(conn_.get())));
}

Result<std::vector<PgResult>> PgConnection::RunBatch(const PgBatch& batch) {
  pg_conn* conn = conn_.get();
  if (PQenterPipelineMode(conn) != 1) return ClientError("starting a pipeline");
  bool sent = true;
  for (const PgBatch::Item& item : batch.items_) {
    const PgParams& p = item.params;
    const Arrays a = PointInto(p.buffer_, p.offsets_, p.lengths_);
    sent = item.prepared
               ? PQsendQueryPrepared(conn, item.text.c_str(), p.size(), a.values.data(),
                                     p.lengths_.data(), a.formats.data(), 1) == 1
               : PQsendQueryParams(conn, item.text.c_str(), 0, nullptr, nullptr, nullptr,
                                   nullptr, 1) == 1;
    if (!sent) break;
  }
  if (sent) sent = PQpipelineSync(conn) == 1;
  if (!sent) {
    Error error = ClientError("sending a pipeline");
    (void)PQexitPipelineMode(conn);
    return error;
  }
  std::vector<PgResult> results;
  std::optional<Error> failed;
  for (const PgBatch::Item& item : batch.items_) {
    pg_result* raw = PQgetResult(conn);
    if (raw == nullptr) {  // the connection broke: nothing more will come
      if (!failed) failed = ClientError("reading a pipeline");
      break;
    }
    if (PQresultStatus(raw) == PGRES_PIPELINE_ABORTED) {
      PQclear(raw);  // skipped after an earlier failure
    } else if (auto checked = Check(raw, (item.prepared ? "running statement '" :
                                                          "running '") + item.text + "'");
               !checked) {
      if (!failed) failed = checked.error();
    } else {
      results.push_back(std::move(checked).value());
    }
    // Each statement's results end with a null.
    if (pg_result* extra = PQgetResult(conn)) {
      PQclear(extra);
      if (!failed) failed = Err(Errc::kInternal, "a pipelined statement returned two results");
    }
  }
  if (!failed || !broken()) {
    pg_result* sync = PQgetResult(conn);  // PGRES_PIPELINE_SYNC
    if (sync == nullptr || PQresultStatus(sync) != PGRES_PIPELINE_SYNC) {
      if (!failed) failed = ClientError("ending a pipeline");
    }
    PQclear(sync);
  }
  if (PQexitPipelineMode(conn) != 1 && !failed) failed = ClientError("leaving a pipeline");
  if (failed) return *failed;
  return results;
}

}  // namespace reckon::storage
