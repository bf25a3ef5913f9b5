#include "reckon/api/cli/cluster_commands.h"

#include <boost/json.hpp>

#include <map>
#include <memory>
#include <ostream>

#include "reckon/storage/postgres/shard_leases.h"
#include "reckon/storage/shard.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;

struct ClusterArgs {
  std::string journal;
  std::string workflow_id;
  bool json = false;
};

void Print(std::ostream& out, const storage::ShardLease& lease, const ClusterArgs& args) {
  if (args.json) {
    json::object object{{"shard", lease.shard},
                        {"owner", lease.owner},
                        {"address", lease.address},
                        {"epoch", lease.epoch},
                        {"expires_in_ms", lease.expires_in_ms}};
    if (!args.workflow_id.empty()) object["workflow_id"] = args.workflow_id;
    out << json::serialize(object) << "\n";
    return;
  }
  if (!args.workflow_id.empty()) out << "workflow " << args.workflow_id << "  ";
  out << "shard " << lease.shard << "  owner " << (lease.owner.empty() ? "-" : lease.owner)
      << "  address " << (lease.address.empty() ? "-" : lease.address) << "  epoch "
      << lease.epoch << "  expires_in_ms " << lease.expires_in_ms << "\n";
}

Result<void> Run(CommandEnv& env, const ClusterArgs& args) {
  RECKON_TRY(auto leases, storage::ShardLeases::Open(args.journal));
  RECKON_TRY(auto table, leases->List());
  if (!args.workflow_id.empty()) {
    const int shard = storage::ShardOf(args.workflow_id);
    for (const storage::ShardLease& lease : table) {
      if (lease.shard == shard) Print(env.out, lease, args);
    }
    env.out.flush();
    return Ok();
  }
  std::map<std::string, int> per_owner;
  for (const storage::ShardLease& lease : table) {
    Print(env.out, lease, args);
    ++per_owner[lease.expires_in_ms > 0 ? lease.owner : std::string()];
  }
  if (!args.json) {
    for (const auto& [owner, count] : per_owner) {
      env.out << (owner.empty() ? "(no live owner)" : owner) << ": " << count << " shard(s)\n";
    }
  }
  env.out.flush();
  return Ok();
}

}  // namespace

void AddClusterCommands(CLI::App& app, CommandEnv& env) {
  auto args = std::make_shared<ClusterArgs>();
  CLI::App* cluster = app.add_subcommand(
      "cluster", "Shard leases of a cluster's PostgreSQL journal: who owns what, at which epoch");
  cluster->add_option("--journal", args->journal, "postgresql://USER@HOST:PORT/DB")->required();
  cluster->add_option("--workflow", args->workflow_id, "only this workflow's shard");
  cluster->add_flag("--json", args->json, "one JSON object per line");
  cluster->callback([&env, args] {
    if (auto result = Run(env, *args); !result) ReportError(env, "cluster", result.error());
  });
}

}  // namespace reckon::cli
