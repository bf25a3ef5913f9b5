// The tools the `reckon` CLI can host itself (embedded `plan run`) and check plans and MCP
// catalogs against without a server: the refund sample's send_refund and lookup_payment, which
// talk HTTP to a payments provider. A server's catalog is whatever its workers declared.
#pragma once

#include <memory>

#include "base/error.h"
#include "engine/contract_registry.h"
#include "samples/common/http_url.h"
#include "samples/refund/card_vault.h"
#include "worker/tool.h"

namespace reckon::cli {

// The built-in tools' contracts.
Result<void> RegisterBuiltinContracts(ContractRegistry& contracts);

// The built-in tools, talking to the provider at `provider`; `vault` must outlive `tools`.
Result<void> RegisterBuiltinTools(ToolRegistry& tools, samples::HttpEndpoint provider,
                                  const refund::CardVault& vault);

}  // namespace reckon::cli
