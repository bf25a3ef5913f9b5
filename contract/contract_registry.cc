#include "reckon/contract/contract_registry.h"

#include "reckon/base/intent_hash.h"
#include "reckon/contract/contract_json.h"

namespace reckon {

Result<RegisteredContract> RegisteredContract::Create(ToolContract contract) {
  RECKON_TRY(ValidateContract(contract));
  auto schema = JsonSchema::Compile(contract.input_schema);
  if (!schema) return schema.error().WithContext("contract '" + contract.name + "'");
  RECKON_TRY(auto hash, ContractHash(contract));
  return RegisteredContract(std::move(contract), std::move(schema).value(), std::move(hash));
}

Result<void> RegisteredContract::ValidateInput(const boost::json::value& input) const {
  auto valid = schema_.Validate(input);
  if (!valid) return valid.error().WithContext("tool '" + contract_.name + "' input");
  return Ok();
}

Result<std::string> RegisteredContract::IntentHashOf(const boost::json::value& input) const {
  RECKON_TRY(ValidateInput(input));
  return IntentHash(input, contract_.secret_fields);
}

Result<bool> RegisteredContract::ApprovalRequiredFor(const boost::json::value& input) const {
  RECKON_TRY(ValidateInput(input));
  return ApprovalRequired(contract_, input);
}

Result<void> ContractRegistry::Register(ToolContract contract) {
  if (contracts_.contains(contract.name)) {
    return Err(Errc::kAlreadyExists, "contract '" + contract.name + "' is already registered");
  }
  RECKON_TRY(auto registered, RegisteredContract::Create(std::move(contract)));
  std::string name = registered.name();
  contracts_.emplace(std::move(name), std::move(registered));
  return Ok();
}

const RegisteredContract* ContractRegistry::FindRegistered(std::string_view name) const {
  auto it = contracts_.find(name);
  return it == contracts_.end() ? nullptr : &it->second;
}

const ToolContract* ContractRegistry::Find(std::string_view name) const {
  const RegisteredContract* registered = FindRegistered(name);
  return registered == nullptr ? nullptr : &registered->contract();
}

std::vector<const ToolContract*> ContractRegistry::All() const {
  std::vector<const ToolContract*> out;
  out.reserve(contracts_.size());
  for (const auto& [name, registered] : contracts_) out.push_back(&registered.contract());
  return out;
}

Result<void> ContractRegistry::ValidateToolInput(std::string_view tool,
                                                 const boost::json::value& input) const {
  const RegisteredContract* registered = FindRegistered(tool);
  if (registered == nullptr) {
    return Err(Errc::kNotFound, "no contract registered for tool '" + std::string(tool) + "'");
  }
  return registered->ValidateInput(input);
}

}  // namespace reckon
