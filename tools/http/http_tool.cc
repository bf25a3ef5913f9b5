#include "reckon/tools/http/http_tool.h"

#include <boost/json/serialize.hpp>

#include <cctype>
#include <string_view>

#include "reckon/contract/field_path.h"
#include "reckon/tools/http/http_client.h"
#include "reckon/tools/http/http_url.h"

namespace reckon::tools {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// Names the file's secrets to the worker, which redacts them (as they are, JSON-escaped or
// percent-encoded, as a URL carries them) from everything the call reports.
void KeepSecrets(const HttpToolsFile& file, const ToolCallContext& context) {
  for (const auto& [name, value] : file.secrets) context.KeepSecret(value);
}

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool Listed(const std::vector<StatusRange>& ranges, int status) {
  for (const StatusRange& range : ranges) {
    if (range.Contains(status)) return true;
  }
  return false;
}

// The string (or number, as JSON text) at `pointer` in `body`; empty when absent.
std::string StringAt(const json::value& body, const std::string& pointer) {
  if (pointer.empty()) return {};
  boost::system::error_code ec;
  const json::value* found = body.find_pointer(pointer, ec);
  if (found == nullptr || ec) return {};
  if (found->is_string()) return std::string(found->as_string());
  if (found->is_int64() || found->is_uint64()) return json::serialize(*found);
  return {};
}

json::value WithoutSecretFields(json::value input, const std::vector<std::string>& secret_fields) {
  for (const std::string& path : secret_fields) {
    std::vector<std::string> segments = SplitFieldPath(path);
    json::value* at = &input;
    for (std::size_t i = 0; at != nullptr && i + 1 < segments.size(); ++i) {
      at = at->is_object() ? at->as_object().if_contains(segments[i]) : nullptr;
    }
    if (at != nullptr && at->is_object()) at->as_object().erase(segments.back());
  }
  return input;
}

// The call an attempt or a lookup sends; an error when the input cannot fill it in.
Result<HttpCall> BuildCall(const HttpRequestSpec& request, const TemplateValues& values,
                           const std::string& idempotency_header, const ToolContract& contract,
                           const ToolCallContext& context) {
  RECKON_TRY(std::string url, request.url.Expand(values, TemplateEscape::kUrl));
  RECKON_TRY(HttpUrl parsed, ParseHttpUrl(url));
  HttpCall call;
  call.method = request.method;
  call.host = parsed.host;
  call.port = parsed.port;
  call.target = parsed.target;
  call.deadline = context.deadline;
  bool has_content_type = false;
  for (const auto& [name, value] : request.headers) {
    RECKON_TRY(std::string text, value.Expand(values, TemplateEscape::kNone));
    if (text.find_first_of("\r\n") != std::string::npos) {
      return Err(Errc::kInvalidArgument, "header " + name + ": a value may not hold a line break");
    }
    has_content_type = has_content_type || IEquals(name, "Content-Type");
    call.headers.push_back({name, std::move(text)});
  }
  if (!idempotency_header.empty()) call.headers.push_back({idempotency_header, context.operation_id});
  std::optional<json::value> body;
  if (request.body_template) {
    RECKON_TRY(json::value expanded, request.body_template->Expand(values));
    body = std::move(expanded);
  } else if (request.body_is_input && values.input != nullptr) {
    body = WithoutSecretFields(*values.input, contract.secret_fields);
  }
  if (body) {
    call.body = json::serialize(*body);
    if (!has_content_type) call.headers.push_back({"Content-Type", "application/json"});
  }
  return call;
}

AttemptOutcome TransportFailure(const Error& error) {
  std::string message = error.message();
  const auto kind = HttpFailureOf(error);
  if (kind == HttpFailure::kNotSent) {
    return ToolFailed(FailureKind::kRetryable, "not_sent", std::move(message));
  }
  if (kind == HttpFailure::kInvalidCall) {
    return ToolFailed(FailureKind::kDefinitive, "invalid_request", std::move(message));
  }
  const bool deadline = message.find("outcome_unknown deadline") != std::string::npos;
  return ToolFailed(FailureKind::kUnknown, deadline ? "deadline_exceeded" : "reply_lost",
                    std::move(message));
}

AttemptOutcome FromReply(const HttpToolSpec& spec, const HttpResponse& response) {
  const HttpOutcomeRule* rule = nullptr;
  for (const HttpOutcomeRule& candidate : spec.outcomes) {
    if (Listed(candidate.statuses, response.status)) {
      rule = &candidate;  // the first that lists the status
      break;
    }
  }
  const std::string status = "HTTP " + std::to_string(response.status);
  Result<json::value> body = ParseJsonBody(response);
  if (rule != nullptr && (rule->means == HttpOutcomeMeaning::kSuccess ||
                          rule->means == HttpOutcomeMeaning::kAccepted)) {
    const bool accepted = rule->means == HttpOutcomeMeaning::kAccepted;
    const std::string what = status + (accepted ? " (accepted)" : " (success)");
    if (!body) {
      return ToolFailed(FailureKind::kUnknown, "unreadable_reply",
                        what + " with a body that is not JSON");
    }
    std::string provider_ref = StringAt(body.value(), spec.provider_ref);
    if (!spec.provider_ref.empty() && provider_ref.empty()) {
      return ToolFailed(FailureKind::kUnknown, "unreadable_reply",
                        what + " without " + spec.provider_ref + " in its body");
    }
    if (accepted) return ToolAccepted(std::move(provider_ref));
    return ToolSucceeded(std::move(body).value(), std::move(provider_ref));
  }
  std::string code = rule != nullptr ? rule->code : "";
  const std::string reply_code = body ? StringAt(body.value(), spec.error_code) : "";
  if (code.empty()) code = reply_code;
  if (code.empty()) code = "http_" + std::to_string(response.status);
  std::string message = status + (reply_code.empty() ? "" : " " + reply_code);
  if (rule == nullptr) {
    return ToolFailed(FailureKind::kUnknown, std::move(code),
                      message + ": a status the tools file does not map (unknown)");
  }
  const FailureKind kind = rule->means == HttpOutcomeMeaning::kDefinitive  ? FailureKind::kDefinitive
                           : rule->means == HttpOutcomeMeaning::kRetryable ? FailureKind::kRetryable
                                                                           : FailureKind::kUnknown;
  return ToolFailed(kind, std::move(code), std::move(message));
}

}  // namespace

asio::awaitable<AttemptOutcome> ExecuteHttpTool(std::shared_ptr<const HttpToolsFile> file,
                                                const HttpToolSpec* spec, json::value input,
                                                ToolCallContext context) {
  KeepSecrets(*file, context);
  TemplateValues values{&input, context.operation_id, &file->secrets};
  Result<HttpCall> call =
      BuildCall(spec->request, values, spec->idempotency_key_header, spec->contract, context);
  if (!call) {
    co_return ToolFailed(FailureKind::kDefinitive, "invalid_request",
                         "the request cannot be built from the input: " +
                             call.error().message());
  }
  Result<HttpResponse> response = co_await HttpRequest(std::move(call).value());
  if (!response) co_return TransportFailure(response.error());
  co_return FromReply(*spec, response.value());
}

asio::awaitable<ReconcileOutcome> ReconcileHttpTool(std::shared_ptr<const HttpToolsFile> file,
                                                    const HttpToolSpec* spec, json::value input,
                                                    ToolCallContext context) {
  KeepSecrets(*file, context);
  const HttpLookupSpec& lookup = *spec->lookup;
  TemplateValues values{input.is_null() ? nullptr : &input, context.operation_id, &file->secrets};
  ReconcileOutcome outcome;  // still_unknown until the reply says otherwise
  Result<HttpCall> call = BuildCall(lookup.request, values, {}, spec->contract, context);
  if (!call) {
    outcome.message = "the lookup cannot be built: " + call.error().message();
    co_return outcome;
  }
  Result<HttpResponse> response = co_await HttpRequest(std::move(call).value());
  if (!response) {
    outcome.message = response.error().message();
    co_return outcome;
  }
  const int status = response.value().status;
  if (Listed(lookup.not_found, status)) {
    outcome.verdict = ReconcileVerdict::kNotFound;
    co_return outcome;
  }
  Result<json::value> body = ParseJsonBody(response.value());
  if (Listed(lookup.committed, status) && body) {
    std::string ref = StringAt(body.value(), lookup.provider_ref);
    if (lookup.provider_ref.empty() || !ref.empty()) {
      outcome.verdict = ReconcileVerdict::kCommitted;
      outcome.provider_ref = std::move(ref);
      outcome.output = std::move(body).value();
      co_return outcome;
    }
  }
  outcome.message = "lookup answered HTTP " + std::to_string(status) +
                    (Listed(lookup.committed, status) ? " without a readable provider_ref" : "");
  co_return outcome;
}

Result<void> RegisterHttpTools(ToolRegistry& registry, std::shared_ptr<const HttpToolsFile> file) {
  for (const HttpToolSpec& spec : file->tools) {
    const HttpToolSpec* one = &spec;
    // The lambdas live in the registry; the coroutines get everything as parameters.
    Tool tool{spec.contract,
              [file, one](json::value input, ToolCallContext context) {
                return ExecuteHttpTool(file, one, std::move(input), std::move(context));
              },
              {}};
    if (spec.lookup) {
      tool.reconcile = [file, one](json::value input, ToolCallContext context) {
        return ReconcileHttpTool(file, one, std::move(input), std::move(context));
      };
    }
    RECKON_TRY(registry.Register(std::move(tool)));
  }
  return Ok();
}

}  // namespace reckon::tools
