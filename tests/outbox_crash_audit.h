// The audit of tests/outbox_crash_test.cc: a server's journal (its runs and its outbox) set
// against the database of reckon-outbox-consumer (samples/outbox_consumer), once every process
// has stopped. Both files are opened read-only; nothing is changed.
//
// Invariants (issue 13, "Crash test"), each broken one a line in `violations`:
//   - every workflow of `workflow_ids` completed, and the messages of its `publish_steps` (ids
//     derived as engine/outbox_message.h does) are in the outbox, acknowledged by the broker;
//   - the outbox holds nothing else (a message exists only for a committed publish step);
//   - every outbox message reached the consumer: its processed ids equal the outbox's ids;
//   - each was processed exactly once: one `effects` row per id (the table has no unique key,
//     so a second processing would show), with the payload the outbox holds;
//   - nothing the consumer processed is absent from the outbox.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::testing {

struct OutboxFigures {
  std::int64_t workflows_completed = 0;
  std::int64_t outbox_messages = 0;
  std::int64_t acked = 0;
  std::int64_t broker_duplicates = 0;  // acks the dispatcher recorded as duplicate
  std::int64_t failed_attempts = 0;    // attempts the dispatcher recorded as failed
  std::int64_t processed = 0;          // distinct ids in the consumer's database
  std::int64_t effects = 0;            // business rows
  std::int64_t consumer_duplicates = 0;  // copies the consumer skipped (all its lives)
  std::int64_t redelivered_first = 0;  // processed on a delivery after the first

  std::string ToString() const;
};

struct OutboxAudit {
  OutboxFigures figures;
  std::vector<std::string> violations;
};

// Errors: the files cannot be read (a missing table, I/O).
Result<OutboxAudit> AuditOutbox(const std::string& journal_path, const std::string& consumer_db,
                                const std::vector<std::string>& workflow_ids,
                                const std::vector<std::string>& publish_steps);

}  // namespace reckon::testing
