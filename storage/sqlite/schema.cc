#include "reckon/storage/sqlite/schema.h"

#include <string>

namespace reckon::storage {
namespace {

// Version 1: the event log, the run index, and the tables derived from events.
constexpr std::string_view kV1 = R"sql(
CREATE TABLE runs (
  run_pk        INTEGER PRIMARY KEY,
  workflow_id   TEXT    NOT NULL,
  run_id        TEXT    NOT NULL,
  workflow_type TEXT    NOT NULL DEFAULT '',
  status        TEXT    NOT NULL DEFAULT 'running',
  next_seq      INTEGER NOT NULL,
  created_at_us INTEGER NOT NULL,
  updated_at_us INTEGER NOT NULL,
  UNIQUE (workflow_id, run_id)
);
CREATE INDEX runs_by_status ON runs (status);

CREATE TABLE events (
  run_pk         INTEGER NOT NULL,
  seq            INTEGER NOT NULL,
  type           INTEGER NOT NULL,
  recorded_at_us INTEGER NOT NULL,
  payload        BLOB    NOT NULL,
  PRIMARY KEY (run_pk, seq)
) WITHOUT ROWID;

CREATE TABLE operations (
  run_pk        INTEGER NOT NULL,
  operation_id  TEXT    NOT NULL,
  step_id       TEXT    NOT NULL,
  tool          TEXT    NOT NULL,
  side_effect   TEXT    NOT NULL,
  state         TEXT    NOT NULL,
  attempt       INTEGER NOT NULL,
  fingerprint   TEXT    NOT NULL,
  contract_hash TEXT    NOT NULL,
  provider_ref  TEXT    NOT NULL DEFAULT '',
  due_at_us     INTEGER NOT NULL DEFAULT 0,
  updated_at_us INTEGER NOT NULL,
  PRIMARY KEY (run_pk, operation_id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX operations_by_id ON operations (operation_id);
CREATE INDEX operations_waiting_for_people ON operations (state)
  WHERE state IN ('awaiting_approval', 'needs_human');

CREATE TABLE timers (
  run_pk     INTEGER NOT NULL,
  timer_id   TEXT    NOT NULL,
  fire_at_us INTEGER NOT NULL,
  PRIMARY KEY (run_pk, timer_id)
) WITHOUT ROWID;
CREATE INDEX timers_by_due ON timers (fire_at_us);

CREATE TABLE tasks (
  task_id             TEXT    PRIMARY KEY,
  queue               TEXT    NOT NULL,
  kind                TEXT    NOT NULL,
  run_pk              INTEGER NOT NULL,
  operation_id        TEXT    NOT NULL DEFAULT '',
  attempt             INTEGER NOT NULL DEFAULT 0,
  visible_at_us       INTEGER NOT NULL,
  lease_owner         TEXT    NOT NULL DEFAULT '',
  lease_expires_at_us INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tasks_by_queue ON tasks (queue, visible_at_us);

CREATE TABLE approvals (
  approval_id   TEXT    PRIMARY KEY,
  operation_id  TEXT    NOT NULL,
  run_pk        INTEGER NOT NULL,
  intent_hash   TEXT    NOT NULL,
  state         TEXT    NOT NULL,
  decided_by    TEXT    NOT NULL DEFAULT '',
  expires_at_us INTEGER NOT NULL DEFAULT 0,
  updated_at_us INTEGER NOT NULL
);
CREATE INDEX approvals_by_operation ON approvals (operation_id);

CREATE TABLE outbox (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id         TEXT    NOT NULL UNIQUE,
  run_pk             INTEGER NOT NULL,
  operation_id       TEXT    NOT NULL DEFAULT '',
  topic              TEXT    NOT NULL,
  payload            BLOB    NOT NULL,
  created_at_us      INTEGER NOT NULL,
  published_at_us    INTEGER NOT NULL DEFAULT 0,
  attempts           INTEGER NOT NULL DEFAULT 0,
  next_attempt_at_us INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX outbox_pending ON outbox (published_at_us, next_attempt_at_us);
)sql";

// Server mode: the tool contracts workers declared, so that recovery after a restart knows
// every contract before any worker has reconnected. A tool's contract never changes in place
// (operations journal the hash they ran under); a new contract needs a new tool name.
constexpr std::string_view kV2 = R"sql(
CREATE TABLE contracts (
  name             TEXT    PRIMARY KEY,
  hash             TEXT    NOT NULL,
  contract_json    TEXT    NOT NULL,
  registered_at_us INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

// Server mode: principals (API tokens, stored as their SHA-256 only) and the audit log of
// changes to them (storage/principal_store.h, docs/SECURITY.md). A name is unique among the
// principals that are not revoked.
constexpr std::string_view kV3 = R"sql(
CREATE TABLE principals (
  id            INTEGER PRIMARY KEY,
  name          TEXT    NOT NULL,
  role          TEXT    NOT NULL,
  scopes        TEXT    NOT NULL DEFAULT '',
  token_hash    TEXT    NOT NULL UNIQUE,
  created_at_us INTEGER NOT NULL,
  created_by    TEXT    NOT NULL,
  expires_at_us INTEGER NOT NULL DEFAULT 0,
  revoked_at_us INTEGER NOT NULL DEFAULT 0,
  revoked_by    TEXT    NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX principals_live_name ON principals (name) WHERE revoked_at_us = 0;

CREATE TABLE audit_log (
  id        INTEGER PRIMARY KEY,
  at_us     INTEGER NOT NULL,
  principal TEXT    NOT NULL,
  action    TEXT    NOT NULL,
  subject   TEXT    NOT NULL,
  detail    TEXT    NOT NULL DEFAULT ''
);
)sql";

// Indexes for the console's and `reckon list`'s filters (RunQuery): runs by type, operations
// by tool. Derived data only; nothing to back-fill.
constexpr std::string_view kV4 = R"sql(
CREATE INDEX runs_by_type ON runs (workflow_type);
CREATE INDEX operations_by_tool ON operations (tool, run_pk);
)sql";

// The transactional outbox (ARCHITECTURE.md, decision 41): the step a message comes from, the
// key that sealed its payload, the ack's stream sequence and the last error on the message,
// and every delivery attempt in a table of its own.
constexpr std::string_view kV5 = R"sql(
ALTER TABLE outbox ADD COLUMN step_id    TEXT    NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN key_id     TEXT    NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN stream_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN last_error TEXT    NOT NULL DEFAULT '';
CREATE TABLE outbox_attempts (
  message_id TEXT    NOT NULL,
  attempt    INTEGER NOT NULL,
  at_us      INTEGER NOT NULL,
  outcome    TEXT    NOT NULL,
  stream_seq INTEGER NOT NULL DEFAULT 0,
  error      TEXT    NOT NULL DEFAULT '',
  PRIMARY KEY (message_id, attempt)
) WITHOUT ROWID;
)sql";

// Page checksums (docs/JOURNAL_FORMAT.md, "Page checksums"; storage/sqlite/checksum_vfs.h): no
// table changes. A release before them would write pages without updating their checksums,
// which this release would then read as damage: the version bump makes it refuse the file.
// Whether a file's pages carry checksums is in its header (8 reserved bytes per page), not in
// this version: an older journal migrated to 6 has none until `reckon admin vacuum`.
constexpr std::string_view kV6 = "-- no statement: the version is the change";

constexpr Migration kMigrations[] = {
    {1, "event log, run index, operations, timers, tasks, approvals, outbox", kV1},
    {2, "contracts declared by workers (server mode)", kV2},
    {3, "principals and the audit log of changes to them (server mode)", kV3},
    {4, "indexes for filtering runs by type and by tool", kV4},
    {5, "outbox delivery records: attempts, acks, errors", kV5},
    {6, "page checksums (older releases must not write the file)", kV6},
};

}  // namespace

std::span<const Migration> JournalMigrations() { return kMigrations; }

Result<int> MigrateForward(SqliteDb& db, std::span<const Migration> migrations) {
  RECKON_TRY(std::int64_t start, db.QueryInt("PRAGMA user_version"));
  int newest = migrations.empty() ? 0 : migrations.back().version;
  if (start > newest) {
    return Err(Errc::kFailedPrecondition,
               "journal '" + db.path() + "' has schema version " + std::to_string(start) +
                   ", newer than this release understands (" + std::to_string(newest) +
                   "); run a newer reckon against it");
  }
  for (const Migration& migration : migrations) {
    if (migration.version <= start) continue;
    RECKON_TRY(db.Exec("BEGIN IMMEDIATE"));
    // Re-read under the write lock: another process may have migrated meanwhile.
    auto current = db.QueryInt("PRAGMA user_version");
    if (current && current.value() >= migration.version) {
      RECKON_TRY(db.Exec("COMMIT"));
      continue;
    }
    auto applied = db.Exec(migration.sql);
    if (applied) {
      applied = db.Exec("PRAGMA user_version = " + std::to_string(migration.version));
    }
    if (!applied) {
      (void)db.Exec("ROLLBACK");
      return applied.error().WithContext("migrating journal to schema version " +
                                         std::to_string(migration.version));
    }
    RECKON_TRY(db.Exec("COMMIT"));
  }
  return static_cast<int>(start);
}

}  // namespace reckon::storage
