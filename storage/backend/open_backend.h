// Opening storage by the --journal argument: the one place that knows every backend, for the
// composition roots (EmbeddedHost, ServerHost, the CLI). A journal argument that starts with
// "postgresql://" or "postgres://" is a libpq connection string and opens the PostgreSQL
// backend (storage/postgres/); anything else is the path of a SQLite file (storage/sqlite/).
// The rest of the code keeps taking a Journal&, an OutboxStore& or a PrincipalStore&.
//
// Stateless functions; each call opens its own connection, owned by the returned object.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/journal.h"
#include "reckon/storage/journal_check_report.h"
#include "reckon/storage/outbox_store.h"
#include "reckon/storage/payload_codec.h"
#include "reckon/storage/principal_store.h"
#include "reckon/storage/shard_fence.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

namespace reckon::storage {

enum class BackendKind { kSqlite, kPostgres };
// Which backend `journal` names.
BackendKind BackendOf(const std::string& journal);

struct OpenJournalOptions {
  enum class Mode {
    kOwner,      // the process's writer: takes the backend's ownership lock, migrates
    kCompanion,  // another connection of the owning process (the server's reader)
    // A writer of a cluster (PostgreSQL only; storage/shard_fence.h): no ownership lock,
    // every append checked against `fence`. A SQLite journal is refused.
    kClusterMember,
  };
  Mode mode = Mode::kOwner;
  // Seals and opens payloads (not owned; must outlive the journal; null: clear).
  const PayloadCodec* payload_codec = nullptr;
  // SQLite only: sync, integrity check at open, cache and checkpoint settings. Its `mode` and
  // `payload_codec` are taken from the fields above.
  SqliteJournalOptions sqlite;
  // kClusterMember: the server's shard fence (not owned; must outlive the journal) and lease.
  const ShardFence* fence = nullptr;
  std::chrono::milliseconds lease{3000};
};

// Opens the journal `journal` names. Errors are the backend's (storage/sqlite/sqlite_journal.h,
// storage/postgres/postgres_journal.h); they name the file or the server.
Result<std::unique_ptr<Journal>> OpenJournal(const std::string& journal,
                                             OpenJournalOptions options = {});

// The health report of the journal `journal` names, for `reckon admin check`: CheckJournal
// (storage/sqlite/journal_check.h) for a file, CheckPostgresJournal
// (storage/postgres/postgres_check.h) for a PostgreSQL database. Read-only; works beside a
// running owner. Errors as theirs (kNotFound: no such file; kUnavailable: cannot connect).
Result<JournalCheckReport> CheckJournalAt(const std::string& journal);

// The journal's outbox and principal stores, on connections of their own. Open them after the
// journal, whose owner applies the migrations.
Result<std::unique_ptr<OutboxStore>> OpenOutboxStore(const std::string& journal,
                                                     const PayloadCodec* codec);
Result<std::unique_ptr<PrincipalStore>> OpenPrincipalStore(const std::string& journal);

}  // namespace reckon::storage
