// The contracts file of MCP tools: for each tool of an MCP server that Reckon may host, its
// side-effect contract and, optionally, how Reckon calls it (its MCP binding). docs/TOOLS.md, section 3
// documents the format; samples/mcp/contracts.json is an example.
//
// The file is a JSON array. An entry is either a plain contract (contract/contract_json.h), or
//   {"contract": {...}, "mcp": {
//      "operation_id_argument": "idempotency_key",  // optional: the argument that also
//                                                   // receives the operation id
//      "provider_ref_field": "refund_id",            // optional: the provider's reference in a
//                                                   // success output (dotted path)
//      "lookup": {                                   // required iff reconcile.mode is lookup
//        "tool": "find_refund",                      // another tool of the same server
//        "operation_id_argument": "idempotency_key", // optional, as above
//        "arguments": {"include": "all"},            // optional constants
//        "input_arguments": {"payment_id": "payment_id"},  // optional: argument <- the input
//                                                   // field at a dotted path
//        "status_field": "status",                   // dotted path in the lookup's output
//        "committed": ["committed"],                 // status values: the operation happened
//        "not_found": ["not_found"],                 // status values: it did not
//        "not_found_codes": ["refund_not_found"],    // optional: isError codes meaning not found
//        "output_field": "refund",                   // optional: what the step returns when
//                                                   // committed (default: the whole output)
//        "provider_ref_field": "refund.refund_id"}}} // optional
// so a plain array of contracts stays valid, and `reckon plan validate --contracts` reads the
// same file (it takes "contract" out of a wrapper). A wrapper may also carry "name", "hash" and
// "side_effect" as `reckon contracts --json` prints them; they are ignored.
//
// Every problem of a file is reported at once, as one Errc::kInvalidArgument whose lines each
// name the entry or tool and the field: "tool 'send_refund': mcp.lookup.status_field: must be
// a dotted field path". Nothing is hosted from a file with a problem.
//
// Plain values; stateless functions, thread-safe.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/contract/contract.h"
#include "reckon/contract/contract_registry.h"

namespace reckon::tools {

struct McpLookupBinding {
  std::string tool;
  std::string operation_id_argument;  // empty: the operation id goes only in _meta
  boost::json::object arguments;
  std::map<std::string, std::string> input_arguments;  // argument -> input field path
  std::string status_field;
  std::vector<std::string> committed;
  std::vector<std::string> not_found;
  std::vector<std::string> not_found_codes;
  std::string output_field;        // empty: the whole output
  std::string provider_ref_field;  // empty: none

  friend bool operator==(const McpLookupBinding&, const McpLookupBinding&) = default;
};

struct McpToolBinding {
  std::string operation_id_argument;  // empty: the operation id goes only in _meta
  std::string provider_ref_field;     // empty: none
  std::optional<McpLookupBinding> lookup;

  friend bool operator==(const McpToolBinding&, const McpToolBinding&) = default;
};

struct McpBoundContract {
  ToolContract contract;
  McpToolBinding mcp;  // all defaults for a plain contract
};

struct McpContracts {
  std::vector<McpBoundContract> tools;  // in file order
  ContractRegistry registry;            // the same contracts, validated

  const McpBoundContract* Find(const std::string& name) const;
};

// Reads the file's JSON. Errors as described above; `source` (the file name) starts each.
Result<McpContracts> ParseMcpContracts(const boost::json::value& file, const std::string& source);

// Reads and parses a file. Errc::kInvalidArgument when it cannot be read or is not JSON.
Result<McpContracts> LoadMcpContractsFile(const std::string& path);

}  // namespace reckon::tools
