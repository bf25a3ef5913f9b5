#include "api/cli/builtin_catalog.h"

#include "samples/refund/refund_contracts.h"
#include "samples/refund/refund_tools.h"

namespace reckon::cli {

Result<void> RegisterBuiltinContracts(ContractRegistry& contracts) {
  return refund::RegisterRefundContracts(contracts);
}

Result<void> RegisterBuiltinTools(ToolRegistry& tools, samples::HttpEndpoint provider,
                                  const refund::CardVault& vault) {
  return refund::RegisterRefundTools(tools, std::move(provider), vault);
}

}  // namespace reckon::cli
