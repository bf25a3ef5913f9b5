// Fuzz target: a tool contract as a worker declares it at registration (api/server/
// worker_api.cc): JSON text parsed as the server parses it, ContractFromJson, ContractHash and
// the validation RegisteredContract::Create runs. Besides not crashing: a contract that parses
// survives ContractToJson and back with the same hash.
#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "reckon/contract/contract_json.h"
#include "reckon/contract/contract_registry.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  boost::system::error_code ec;
  const boost::json::value value =
      boost::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), ec);
  if (ec) return 0;
  auto contract = reckon::ContractFromJson(value);
  if (!contract) return 0;
  auto hash = reckon::ContractHash(contract.value());
  (void)reckon::RegisteredContract::Create(contract.value());
  if (!hash) return 0;
  auto back = reckon::ContractFromJson(reckon::ContractToJson(contract.value()));
  FUZZ_CHECK(back.has_value(), "ContractToJson wrote JSON that ContractFromJson refuses");
  auto back_hash = reckon::ContractHash(back.value());
  FUZZ_CHECK(back_hash.has_value() && back_hash.value() == hash.value(),
             "a contract's hash changed through ContractToJson and back");
  return 0;
}
