// The set of tool contracts a program knows, each checked once and kept with its compiled
// input schema and its hash.
//
// A registry is an ordinary object: main() (or a test) builds one and passes it to whatever
// needs it; there is no global instance. Thread-safety: Register is not thread-safe; once
// registration is over, the const methods may be called from many threads at once. Pointers
// returned by Find stay valid as long as the registry lives (contracts are never removed).
#pragma once

#include <boost/json/value.hpp>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/base/json_schema.h"
#include "reckon/contract/contract.h"

namespace reckon {

// A contract that passed ValidateContract, with what the engine derives from it once.
class RegisteredContract {
 public:
  // Validates `contract`, compiles its input schema and computes its hash.
  static Result<RegisteredContract> Create(ToolContract contract);

  const ToolContract& contract() const { return contract_; }
  const std::string& name() const { return contract_.name; }
  const std::string& hash() const { return hash_; }  // ContractHash (contract/contract_json.h)

  // Errc::kInvalidArgument naming the tool and every violation: "tool 'send_refund' input:
  // amount_cents: must be >= 1". A rejected input is a definitive rejection, never retried.
  Result<void> ValidateInput(const boost::json::value& input) const;

  // The intent hash of a valid input (secret fields left out); fails as ValidateInput does.
  Result<std::string> IntentHashOf(const boost::json::value& input) const;

  // Whether a valid input needs approval; fails as ValidateInput does.
  Result<bool> ApprovalRequiredFor(const boost::json::value& input) const;

 private:
  RegisteredContract(ToolContract contract, JsonSchema schema, std::string hash)
      : contract_(std::move(contract)), schema_(std::move(schema)), hash_(std::move(hash)) {}

  ToolContract contract_;
  JsonSchema schema_;
  std::string hash_;
};

class ContractRegistry {
 public:
  // Adds `contract`. Errc::kInvalidArgument if ValidateContract refuses it;
  // Errc::kAlreadyExists if a contract with its name is registered. On failure the registry
  // is unchanged.
  Result<void> Register(ToolContract contract);

  // nullptr if no contract has that name.
  const ToolContract* Find(std::string_view name) const;
  const RegisteredContract* FindRegistered(std::string_view name) const;

  // Every contract, sorted by name.
  std::vector<const ToolContract*> All() const;
  std::size_t size() const { return contracts_.size(); }

  // Validates a tool call's input. Errc::kNotFound for an unknown tool; otherwise as
  // RegisteredContract::ValidateInput.
  Result<void> ValidateToolInput(std::string_view tool, const boost::json::value& input) const;

 private:
  std::map<std::string, RegisteredContract, std::less<>> contracts_;
};

}  // namespace reckon
