#include "reckon/storage/backend/open_backend.h"

#include "reckon/storage/postgres/postgres_check.h"
#include "reckon/storage/postgres/postgres_journal.h"
#include "reckon/storage/postgres/postgres_outbox_store.h"
#include "reckon/storage/postgres/postgres_principal_store.h"
#include "reckon/storage/sqlite/journal_check.h"
#include "reckon/storage/sqlite/sqlite_outbox_store.h"
#include "reckon/storage/sqlite/sqlite_principal_store.h"

namespace reckon::storage {

BackendKind BackendOf(const std::string& journal) {
  return IsPostgresConninfo(journal) ? BackendKind::kPostgres : BackendKind::kSqlite;
}

Result<JournalCheckReport> CheckJournalAt(const std::string& journal) {
  if (BackendOf(journal) == BackendKind::kPostgres) return CheckPostgresJournal(journal);
  return CheckJournal(journal);
}

Result<std::unique_ptr<Journal>> OpenJournal(const std::string& journal,
                                             OpenJournalOptions options) {
  using Mode = OpenJournalOptions::Mode;
  const bool owner = options.mode == Mode::kOwner;
  if (BackendOf(journal) == BackendKind::kPostgres) {
    PostgresJournalOptions pg;
    pg.mode = owner ? PostgresJournalOptions::Mode::kOwner
            : options.mode == Mode::kClusterMember ? PostgresJournalOptions::Mode::kClusterMember
                                                   : PostgresJournalOptions::Mode::kCompanion;
    pg.payload_codec = options.payload_codec;
    pg.fence = options.fence;
    pg.lease = options.lease;
    return OpenPostgresJournal(journal, pg);
  }
  if (options.mode == Mode::kClusterMember) {
    return Err(Errc::kInvalidArgument,
               "a cluster needs a PostgreSQL journal (--journal postgresql://...), not the "
               "SQLite file '" + journal + "': servers of a cluster share one database");
  }
  SqliteJournalOptions sqlite = options.sqlite;
  sqlite.mode = owner ? SqliteJournalOptions::Mode::kOwner
                      : SqliteJournalOptions::Mode::kCompanion;
  sqlite.payload_codec = options.payload_codec;
  return OpenSqliteJournal(journal, sqlite);
}

Result<std::unique_ptr<OutboxStore>> OpenOutboxStore(const std::string& journal,
                                                     const PayloadCodec* codec) {
  if (BackendOf(journal) == BackendKind::kPostgres) {
    RECKON_TRY(auto store, PostgresOutboxStore::Open(journal, codec));
    return std::unique_ptr<OutboxStore>(std::move(store));
  }
  RECKON_TRY(auto store, SqliteOutboxStore::Open(journal, codec));
  return std::unique_ptr<OutboxStore>(std::move(store));
}

Result<std::unique_ptr<PrincipalStore>> OpenPrincipalStore(const std::string& journal) {
  if (BackendOf(journal) == BackendKind::kPostgres) {
    RECKON_TRY(auto store, PostgresPrincipalStore::Open(journal));
    return std::unique_ptr<PrincipalStore>(std::move(store));
  }
  RECKON_TRY(auto store, SqlitePrincipalStore::Open(journal));
  return std::unique_ptr<PrincipalStore>(std::move(store));
}

}  // namespace reckon::storage
