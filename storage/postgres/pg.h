// A thin wrapper over libpq for the PostgreSQL journal: one connection (PgConnection), the
// parameters of one statement (PgParams) and its result (PgResult).
//
// Binary-safe both ways: every parameter is sent in binary format with its length (text as its
// UTF-8 bytes, integers as big-endian int8, blobs as bytea), so a value is never cut at a NUL
// byte or re-quoted; every result comes back in binary format. A statement therefore names
// the type of each parameter with a cast (`$1::bigint`, `$2::text`, `$3::bytea`).
//
// Errors are chosen by what the caller does next: a lost or refused connection, a shutting
// down server, a serialization failure or a full disk are kUnavailable; a unique or other
// integrity violation is kAlreadyExists (the request's fault, as with SQLite's constraints);
// invalid data (a NUL byte or bad UTF-8 in a text) kInvalidArgument; damaged data kCorruption;
// anything else (a broken statement) kInternal. Messages name the server (never its password)
// and carry PostgreSQL's message and SQLSTATE.
//
// Ownership: a PgConnection owns its PGconn, a PgResult its PGresult; both movable only.
// Not thread-safe: one owner at a time, like a libpq connection. Views returned by a PgResult
// live as long as it does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"

struct pg_conn;
struct pg_result;

namespace reckon::storage {

class PgParams {
 public:
  PgParams& Add(std::int64_t value);
  PgParams& Add(std::string_view text);
  PgParams& AddBytes(std::span<const std::byte> bytes);
  PgParams& AddNull();

  int size() const { return static_cast<int>(lengths_.size()); }

 private:
  friend class PgConnection;
  // Values are kept in one buffer and pointed into once it stops growing.
  std::string buffer_;
  std::vector<std::size_t> offsets_;
  std::vector<int> lengths_;  // -1: NULL
};

// Statements to send together in one round trip (PgConnection::RunBatch).
class PgBatch {
 public:
  // A statement without parameters ("SAVEPOINT append").
  PgBatch& Sql(std::string sql);
  // A statement prepared on the connection, with its parameters.
  PgBatch& Prepared(std::string name, PgParams params);
  std::size_t size() const { return items_.size(); }

 private:
  friend class PgConnection;
  struct Item {
    std::string text;  // the SQL, or the prepared statement's name
    bool prepared = false;
    PgParams params;
  };
  std::vector<Item> items_;
};

class PgResult {
 public:
  int rows() const;
  int columns() const;
  bool IsNull(int row, int column) const;
  // A bigint, integer or smallint column.
  std::int64_t Int(int row, int column) const;
  std::string_view Text(int row, int column) const;
  std::span<const std::byte> Bytes(int row, int column) const;
  // Rows affected by an INSERT/UPDATE/DELETE.
  std::int64_t affected() const;
  // The command tag: "COMMIT", or "ROLLBACK" for a COMMIT of a failed transaction.
  std::string_view command() const;

 private:
  friend class PgConnection;
  struct Clearer {
    void operator()(pg_result* result) const;
  };
  explicit PgResult(pg_result* result) : result_(result) {}
  std::unique_ptr<pg_result, Clearer> result_;
};

class PgConnection {
 public:
  // Connects with `conninfo` (a "postgresql://" URI or "key=value" pairs, libpq's syntax) and
  // sets the session up: UTF-8, synchronous_commit = on, application_name "reckon pid=... ".
  // Unless `conninfo` says otherwise: connect_timeout 10 s, TCP keepalives after 10 s idle
  // (every 5 s, 3 probes) and tcp_user_timeout 30 s, so a dead server or network path fails
  // the call with kUnavailable instead of blocking for the kernel's hours.
  // kUnavailable (with libpq's reason) when the server cannot be reached or refuses.
  static Result<PgConnection> Connect(const std::string& conninfo);

  PgConnection(PgConnection&&) noexcept = default;
  PgConnection& operator=(PgConnection&&) noexcept = default;

  // Runs `sql` (one or several statements, no parameters) and discards what it returns.
  Result<void> Exec(std::string_view sql);
  // The same, returning the result of the last statement (its command tag, text columns).
  Result<PgResult> Command(std::string_view sql);
  // Runs `sql` once with `params` (unnamed statement).
  Result<PgResult> Query(const std::string& sql, const PgParams& params = {});
  // Prepares `sql` under `name` on this connection, and runs it.
  Result<void> Prepare(const std::string& name, const std::string& sql);
  Result<PgResult> Run(const std::string& name, const PgParams& params);
  // Sends every statement of `batch` at once (libpq's pipeline mode) and waits for all their
  // results: one round trip instead of one per statement. They run in order; after the first
  // that fails the server skips the rest, and that failure is the error returned. On success,
  // one result per statement, in order.
  Result<std::vector<PgResult>> RunBatch(const PgBatch& batch);

  // True once the connection is lost: every later call fails with kUnavailable.
  bool broken() const;
  // Connects again with the same parameters and sets the session up again; statements
  // prepared before are gone. kUnavailable when the server still cannot be reached.
  Result<void> Reconnect();
  // The SQLSTATE of the last call that failed on the server ("55P03"); empty if none did.
  const std::string& last_sql_state() const { return last_sql_state_; }
  // "postgresql://user@host:port/db", for messages (no password).
  const std::string& display() const { return display_; }
  pg_conn* handle() const { return conn_.get(); }

 private:
  struct Finisher {
    void operator()(pg_conn* conn) const;
  };
  PgConnection(std::unique_ptr<pg_conn, Finisher> conn, std::string display)
      : conn_(std::move(conn)), display_(std::move(display)) {}
  Result<PgResult> Check(pg_result* result, std::string_view what);
  // The error for a call that failed in libpq itself (PQerrorMessage).
  Error ClientError(std::string_view what) const;
  Result<void> SetUpSession();

  std::unique_ptr<pg_conn, Finisher> conn_;
  std::string display_;
  std::string last_sql_state_;
};

}  // namespace reckon::storage
