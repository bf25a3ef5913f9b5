// `reckon outbox ...`: the transactional outbox of a journal file (ARCHITECTURE.md, decision
// 41), read directly, so it works beside a running server or embedded host.
//
//   reckon outbox list JOURNAL [--pending] [--json] [--limit N]
//     One line per message, oldest first: its id, subject, step, attempts, and either
//     "acked seq=N" or "pending" with the next attempt's time and the last error. --pending
//     shows only messages the broker has not acknowledged. Payloads are never printed (they
//     may be sealed, and they are a business's data). Exit 0; 1 if the journal cannot be read;
//     2 for bad usage or a missing file. With --json, one JSON object per line:
//     {"message_id", "subject", "step_id", "run_pk", "attempts", "acked", "stream_seq",
//      "published_at_us", "next_attempt_at_us", "last_error", "created_at_us"}.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

// Registers the subcommands on `app`. `env` must outlive `app`.
void AddOutboxCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
