// What an operation id is made of and how each kind of tool receives it: one table that the
// behaviour and its description both read. The engine's derivation (engine/operation_id.cc)
// hashes the inputs listed here, in this order; the tool adapters (tools/http, tools/mcp) send
// the id under the names given here; the contract card (contract_card.h, question 3) states
// these same values. Changing a row changes what the engine does and what the card says
// together; tests/contract_card_behaviour_test.cc checks that they agree.
// Constants and a pure function; thread-safe.
#pragma once

#include <array>
#include <span>
#include <string_view>

namespace reckon {

// A part of a run and step that an operation id is derived from.
enum class OperationIdInput { kNamespace, kWorkflowId, kRunId, kStepId };

// "namespace", "workflow_id", "run_id", "step_id".
std::string_view OperationIdInputName(OperationIdInput input);

// Run-scoped ids (every run started by release 0.3 or later), in the order they are hashed.
inline constexpr std::array<OperationIdInput, 4> kRunScopedIdInputs{
    OperationIdInput::kNamespace, OperationIdInput::kWorkflowId, OperationIdInput::kRunId,
    OperationIdInput::kStepId};
// Workflow-scoped ids (runs journaled before release 0.3 keep them for life).
inline constexpr std::array<OperationIdInput, 2> kWorkflowScopedIdInputs{
    OperationIdInput::kWorkflowId, OperationIdInput::kStepId};

inline std::span<const OperationIdInput> OperationIdInputs(bool run_scoped) {
  if (run_scoped) return kRunScopedIdInputs;
  return kWorkflowScopedIdInputs;
}

// Every operation id starts with this, then 32 hex digits.
inline constexpr std::string_view kOperationIdPrefix = "op_";
// The journal event that records the id before the first attempt starts.
inline constexpr std::string_view kOperationIdJournaledIn = "OperationPrepared";

// How each kind of tool receives the id, on every attempt and lookup:
// a C++ tool reads it from its call context (worker/tool.h, ToolCallContext::operation_id);
inline constexpr std::string_view kCppToolOperationIdField = "ctx.operation_id";
// an HTTP tool sends it in the header that this member of its tools-file entry names (no
// header by default), and wherever a template refers to it by this name, "{operation_id}";
inline constexpr std::string_view kHttpIdempotencyHeaderMember = "idempotency_key_header";
inline constexpr std::string_view kOperationIdTemplateName = "operation_id";
// an MCP tool gets it in the tools/call request's _meta under this key (a valid MCP _meta key:
// a reverse-DNS prefix Reckon owns, a slash, a name), and also in the argument that this
// member of its binding names, if any.
inline constexpr std::string_view kMcpOperationIdMetaKey = "dev.reckon/operation-id";
inline constexpr std::string_view kMcpOperationIdArgumentMember = "operation_id_argument";

}  // namespace reckon
