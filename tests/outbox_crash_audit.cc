#include "tests/outbox_crash_audit.h"

#include <map>
#include <set>
#include <sstream>

#include "reckon/engine/outbox_message.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::testing {
namespace {

using storage::SqliteDb;
using storage::Statement;

struct OutboxEntry {
  std::string payload;
  bool acked = false;
};

std::string Text(std::span<const std::byte> blob) {
  return std::string(reinterpret_cast<const char*>(blob.data()), blob.size());
}

Result<std::map<std::string, OutboxEntry>> ReadOutbox(SqliteDb& journal) {
  std::map<std::string, OutboxEntry> out;
  RECKON_TRY(Statement rows,
             journal.Prepare("SELECT message_id, payload, published_at_us FROM outbox"));
  for (;;) {
    RECKON_TRY(bool row, rows.Step());
    if (!row) break;
    out[std::string(rows.ColumnText(0))] =
        OutboxEntry{Text(rows.ColumnBlob(1)), rows.ColumnInt(2) != 0};
  }
  return out;
}

// message id -> (effects rows, their payload)
struct EffectEntry {
  std::int64_t rows = 0;
  std::string payload;
};

Result<std::map<std::string, EffectEntry>> ReadEffects(SqliteDb& consumer) {
  std::map<std::string, EffectEntry> out;
  RECKON_TRY(Statement rows, consumer.Prepare("SELECT message_id, payload FROM effects"));
  for (;;) {
    RECKON_TRY(bool row, rows.Step());
    if (!row) break;
    EffectEntry& entry = out[std::string(rows.ColumnText(0))];
    ++entry.rows;
    entry.payload = std::string(rows.ColumnText(1));
  }
  return out;
}

Result<std::set<std::string>> ReadProcessed(SqliteDb& consumer) {
  std::set<std::string> out;
  RECKON_TRY(Statement rows, consumer.Prepare("SELECT message_id FROM processed_messages"));
  for (;;) {
    RECKON_TRY(bool row, rows.Step());
    if (!row) break;
    out.insert(std::string(rows.ColumnText(0)));
  }
  return out;
}

Result<std::int64_t> CompletedRun(SqliteDb& journal, const std::string& workflow_id) {
  RECKON_TRY(Statement q, journal.Prepare("SELECT count(*) FROM runs WHERE workflow_id = ?1 "
                                          "AND status = 'completed'"));
  q.Bind(1, workflow_id);
  RECKON_TRY(bool row, q.Step());
  return row ? q.ColumnInt(0) : 0;
}

// What the workflow's message ids derive from: its newest run, in the default namespace the
// crash test's processes use (engine/operation_id.h).
Result<IdScope> ScopeOf(SqliteDb& journal, const std::string& workflow_id) {
  RECKON_TRY(Statement q, journal.Prepare("SELECT run_id FROM runs WHERE workflow_id = ?1 "
                                          "ORDER BY run_pk DESC LIMIT 1"));
  q.Bind(1, workflow_id);
  RECKON_TRY(bool row, q.Step());
  if (!row) return Err(Errc::kNotFound, "no run of " + workflow_id);
  return IdScope{kRunScopedIds, "default", workflow_id, std::string(q.ColumnText(0))};
}

}  // namespace

std::string OutboxFigures::ToString() const {
  std::ostringstream out;
  out << workflows_completed << " workflows completed, " << outbox_messages
      << " outbox messages (" << acked << " acked), broker absorbed " << broker_duplicates
      << " duplicate publish(es), " << failed_attempts << " failed attempt(s); consumer "
      << processed << " processed, " << effects << " effect rows, skipped "
      << consumer_duplicates << " duplicate deliver(ies), " << redelivered_first
      << " first processed on a redelivery";
  return out.str();
}

Result<OutboxAudit> AuditOutbox(const std::string& journal_path, const std::string& consumer_db,
                                const std::vector<std::string>& workflow_ids,
                                const std::vector<std::string>& publish_steps) {
  RECKON_TRY(SqliteDb journal, SqliteDb::Open(journal_path, /*read_only=*/true));
  RECKON_TRY(SqliteDb consumer, SqliteDb::Open(consumer_db, /*read_only=*/true));
  OutboxAudit audit;
  OutboxFigures& f = audit.figures;
  auto violation = [&audit](const std::string& text) { audit.violations.push_back(text); };

  RECKON_TRY(auto outbox, ReadOutbox(journal));
  RECKON_TRY(auto effects, ReadEffects(consumer));
  RECKON_TRY(auto processed, ReadProcessed(consumer));
  f.outbox_messages = static_cast<std::int64_t>(outbox.size());
  f.processed = static_cast<std::int64_t>(processed.size());
  RECKON_TRY(f.broker_duplicates,
             journal.QueryInt("SELECT count(*) FROM outbox_attempts WHERE outcome = 'duplicate'"));
  RECKON_TRY(f.failed_attempts,
             journal.QueryInt("SELECT count(*) FROM outbox_attempts WHERE outcome = 'failed'"));
  RECKON_TRY(f.effects, consumer.QueryInt("SELECT count(*) FROM effects"));
  RECKON_TRY(f.consumer_duplicates,
             consumer.QueryInt("SELECT coalesce(sum(copies), 0) FROM skipped_copies"));
  RECKON_TRY(f.redelivered_first, consumer.QueryInt("SELECT count(*) FROM effects "
                                                    "WHERE deliveries > 1"));

  // Every workflow completed, with its messages in the outbox, acknowledged.
  std::set<std::string> expected;
  for (const std::string& workflow : workflow_ids) {
    RECKON_TRY(std::int64_t completed, CompletedRun(journal, workflow));
    if (completed == 1) {
      ++f.workflows_completed;
    } else {
      violation(workflow + " has " + std::to_string(completed) + " completed runs, not 1");
    }
    auto scope = ScopeOf(journal, workflow);
    if (!scope) {
      violation(workflow + " has no run");
      continue;
    }
    for (const std::string& step : publish_steps) {
      const std::string id = MessageIdFor(scope.value(), step);
      expected.insert(id);
      auto it = outbox.find(id);
      if (it == outbox.end()) {
        violation(workflow + " " + step + " (" + id + ") is not in the outbox");
      } else if (!it->second.acked) {
        violation(id + " (" + workflow + ") was never acknowledged by the broker");
      }
    }
  }
  for (const auto& [id, entry] : outbox) {
    f.acked += entry.acked ? 1 : 0;
    if (expected.count(id) == 0) violation(id + " is in the outbox but no step published it");
    // Reached the consumer, processed once, with the outbox's payload.
    if (processed.count(id) == 0) violation(id + " never reached the consumer");
    auto effect = effects.find(id);
    if (effect == effects.end()) {
      violation(id + " has no effect row");
    } else if (effect->second.rows != 1) {
      violation(id + " was processed " + std::to_string(effect->second.rows) + " times");
    } else if (effect->second.payload != entry.payload) {
      violation(id + ": the consumer applied '" + effect->second.payload +
                "', the outbox holds '" + entry.payload + "'");
    }
  }
  // Nothing processed that the outbox does not hold.
  for (const std::string& id : processed) {
    if (outbox.count(id) == 0) violation("the consumer processed " + id + ", not in the outbox");
  }
  for (const auto& [id, effect] : effects) {
    if (outbox.count(id) == 0) violation("an effect of " + id + ", not in the outbox");
  }
  return audit;
}

}  // namespace reckon::testing
