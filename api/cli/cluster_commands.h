// `reckon cluster`: the shard leases of a cluster's PostgreSQL journal (docs/DEPLOYMENT.md,
// "Several nodes on PostgreSQL"), read directly from the database, so it works whichever servers
// are up.
//
//   reckon cluster --journal postgresql://... [--workflow ID] [--json]
//     Without --workflow: one line per shard: shard, owner, address, epoch, and the ms until
//     its lease expires (negative: expired), then how many shards each owner holds.
//     With --workflow: the workflow's shard and that shard's lease.
//     --json: one JSON object per line {"shard", "owner", "address", "epoch",
//     "expires_in_ms"} (with --workflow, also "workflow_id").
//     Exit 0; 1 if the database cannot be read or predates cluster mode.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

// Registers the command on `app`. `env` must outlive `app`.
void AddClusterCommands(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
