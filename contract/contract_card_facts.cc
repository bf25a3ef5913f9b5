#include "reckon/contract/contract_card_facts.h"

#include <boost/json/array.hpp>

#include <algorithm>

#include "reckon/base/intent_hash.h"
#include "reckon/contract/failure_policy.h"
#include "reckon/contract/field_path.h"
#include "reckon/contract/operation_id_facts.h"

namespace reckon {
namespace {

namespace json = boost::json;

json::array Names(std::span<const OperationIdInput> inputs) {
  json::array out;
  for (OperationIdInput input : inputs) out.emplace_back(OperationIdInputName(input));
  return out;
}

void AddOnce(std::vector<std::string>& codes, const std::string& code) {
  if (std::find(codes.begin(), codes.end(), code) == codes.end()) codes.push_back(code);
}

// Sets `path` in `input` to true, making the objects on the way.
void Plant(json::object& input, const std::string& path) {
  json::object* at = &input;
  const std::vector<std::string> segments = SplitFieldPath(path);
  for (std::size_t i = 0; i + 1 < segments.size(); ++i) {
    json::value& next = (*at)[segments[i]];
    if (!next.is_object()) next = json::object{};
    at = &next.as_object();
  }
  (*at)[segments.back()] = true;
}

}  // namespace

json::object OperationIdFacts() {
  return {{"derived_from", Names(kRunScopedIdInputs)},
          {"derived_from_before_0_3", Names(kWorkflowScopedIdInputs)},
          {"prefix", kOperationIdPrefix},
          {"journaled_in", kOperationIdJournaledIn},
          {"cpp_tool_reads", kCppToolOperationIdField},
          {"http_header_named_by", kHttpIdempotencyHeaderMember},
          {"http_template", "{" + std::string(kOperationIdTemplateName) + "}"},
          {"mcp_meta_key", kMcpOperationIdMetaKey},
          {"mcp_argument_named_by", kMcpOperationIdArgumentMember}};
}

CodeClasses ClassifyListedCodes(const ToolContract& c) {
  std::vector<std::string> listed;
  for (const auto* list : {&c.definitive_codes, &c.retry.retryable_codes, &c.unknown_codes}) {
    for (const std::string& code : *list) AddOnce(listed, code);
  }
  CodeClasses out;
  for (const std::string& code : listed) {
    const FailureKind as_definitive = ClassifyFailure(c, FailureKind::kDefinitive, code);
    const FailureKind as_retryable = ClassifyFailure(c, FailureKind::kRetryable, code);
    // A listed code decides the class whatever the report said; if it did not, the code would
    // say nothing on its own, and the card would not list it.
    if (as_definitive != as_retryable) continue;
    switch (as_definitive) {
      case FailureKind::kDefinitive: out.definitive.push_back(code); break;
      case FailureKind::kRetryable: out.retryable.push_back(code); break;
      case FailureKind::kUnknown: out.unknown.push_back(code); break;
    }
  }
  return out;
}

std::vector<std::string> IntentFields(const ToolContract& c) {
  const std::vector<std::string> declared = DeclaredFieldPaths(c.input_schema);
  json::object full;
  for (const std::string& path : declared) Plant(full, path);
  const json::value hashed = RemoveSecretFields(full, c.secret_fields);
  std::vector<std::string> out;
  for (const std::string& path : declared) {
    if (FindField(hashed, path) != nullptr) out.push_back(path);
  }
  return out;
}

}  // namespace reckon
