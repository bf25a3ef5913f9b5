// Where the `reckon` commands that check things against tool contracts (plan validate, plan
// run, contracts --mcp) get them: `--contracts FILE`, a JSON array of tool contracts as
// ContractToJson writes them (contract/contract_json.h; e.g. a program's declared tools,
// samples/refund/refund_contracts.json) or a tools file (tools/http/http_tools_file.h: the
// contract of each of its tools), or else the server's, as its workers declared them.
// The CLI carries no tools of its own.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "reckon/api/cli/remote.h"
#include "reckon/base/error.h"
#include "reckon/contract/contract_registry.h"

namespace reckon::cli {

struct ContractSource {
  std::string file;  // --contracts; empty: ask the server in `remote`
  std::string Describe(const RemoteFlags& remote) const {
    return file.empty() ? "the contracts of the server at " + remote.server : "the contracts in " + file;
  }
};

// Adds --contracts FILE to `command`; `source` must outlive it.
void AddContractSourceFlag(CLI::App* command, ContractSource& source);

// The contracts, each validated as registration validates it. Errors name the file and entry
// (kInvalidArgument) or the server problem (as CallServer reports it).
Result<ContractRegistry> LoadContracts(const ContractSource& source, const RemoteFlags& remote);

// A file's contracts: a JSON array of contract objects, or a tools file's.
Result<ContractRegistry> LoadContractsFile(const std::string& path);

}  // namespace reckon::cli
