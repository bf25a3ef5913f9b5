#include "reckon/tools/http/http_tool_parse.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "reckon/contract/contract_json.h"
#include "reckon/contract/operation_id_facts.h"

namespace reckon::tools {
namespace {

namespace json = boost::json;

const std::set<std::string, std::less<>> kMethods = {"GET",    "HEAD",    "POST", "PUT",
                                                     "DELETE", "OPTIONS", "PATCH"};

// Collects the problems of one tool under its prefix.
struct ToolProblems {
  std::string prefix;  // "tool 'send_refund' (tools[0]): "
  std::vector<std::string>& all;
  std::size_t before = all.size();

  void Add(const std::string& field, const std::string& message) {
    all.push_back(prefix + field + ": " + message);
  }
  // Moves problems a helper appended without the prefix under it.
  void AdoptFrom(std::vector<std::string>& raw) {
    for (std::string& problem : raw) all.push_back(prefix + std::move(problem));
    raw.clear();
  }
  bool Any() const { return all.size() > before; }
};

std::optional<std::vector<StatusRange>> ParseStatuses(const json::value* value,
                                                      const std::string& field,
                                                      ToolProblems& problems) {
  if (value == nullptr || !value->is_array() || value->as_array().empty()) {
    problems.Add(field, "must be a non-empty array of statuses (200, or \"2xx\")");
    return std::nullopt;
  }
  std::vector<StatusRange> ranges;
  bool ok = true;
  const json::array& items = value->as_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const json::value& item = items[i];
    const std::string where = field + "[" + std::to_string(i) + "]";
    if (item.is_int64() && item.as_int64() >= 100 && item.as_int64() <= 599) {
      const int status = static_cast<int>(item.as_int64());
      ranges.push_back({status, status});
    } else if (item.is_string() && item.as_string().size() == 3 && item.as_string()[0] >= '1' &&
               item.as_string()[0] <= '5' && item.as_string().subview(1) == "xx") {
      const int hundred = (item.as_string()[0] - '0') * 100;
      ranges.push_back({hundred, hundred + 99});
    } else {
      problems.Add(where, "must be a status 100..599 or a class such as \"4xx\"");
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return ranges;
}

void CheckPointer(const json::object& object, std::string_view name, const std::string& field,
                  std::string& out, ToolProblems& problems) {
  const json::value* value = object.if_contains(name);
  if (value == nullptr) return;
  if (!value->is_string() || (!value->as_string().empty() && value->as_string()[0] != '/')) {
    problems.Add(field, "must be a JSON Pointer into the reply body, such as \"/refund_id\"");
    return;
  }
  out = std::string(value->as_string());
}

void ParseHeaders(const json::value* headers, const std::string& field, const TemplateScope& scope,
                  HttpRequestSpec& spec, ToolProblems& problems) {
  if (headers == nullptr) return;
  if (!headers->is_object()) {
    problems.Add(field + ".headers", "must be an object of header name -> value template");
    return;
  }
  std::vector<std::string> raw;
  for (const auto& header : headers->as_object()) {
    const std::string name(header.key());
    const std::string where = field + ".headers." + name;
    if (!header.value().is_string()) {
      problems.Add(where, "must be a string template");
      continue;
    }
    std::string lower;
    for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "content-length" || lower == "transfer-encoding" || lower == "host" ||
        lower == "connection") {
      problems.Add(where, "is set by the client; remove it");
      continue;
    }
    spec.headers.emplace_back(name, TextTemplate::Parse(header.value().as_string(), scope, where, raw));
    problems.AdoptFrom(raw);
  }
}

void ParseBody(const json::value* body, const std::string& field, const TemplateScope& scope,
               HttpRequestSpec& spec, ToolProblems& problems) {
  if (body == nullptr) return;
  const std::string where = field + ".body";
  if (!body->is_object()) {
    problems.Add(where, "must be {\"template\": JSON} or {\"input\": \"without_secret_fields\"}");
    return;
  }
  std::vector<std::string> raw;
  CheckMembers(body->as_object(), {"template", "input"}, where, raw);
  problems.AdoptFrom(raw);
  const json::value* tmpl = body->as_object().if_contains("template");
  const json::value* input = body->as_object().if_contains("input");
  if ((tmpl != nullptr) == (input != nullptr)) {
    problems.Add(where, "give exactly one of \"template\" and \"input\"");
  } else if (tmpl != nullptr) {
    spec.body_template = JsonTemplate::Parse(*tmpl, scope, where + ".template", raw);
    problems.AdoptFrom(raw);
  } else if (!input->is_string() || input->as_string() != "without_secret_fields") {
    problems.Add(where + ".input", "must be \"without_secret_fields\" (the whole input, minus "
                                   "the contract's secret_fields)");
  } else {
    spec.body_is_input = true;
  }
}

std::optional<HttpRequestSpec> ParseRequest(const json::value* value, const std::string& field,
                                            const TemplateScope& scope, bool lookup,
                                            ToolProblems& problems) {
  if (value == nullptr || !value->is_object()) {
    problems.Add(field, "must be an object with \"method\" and \"url\"");
    return std::nullopt;
  }
  const json::object& object = value->as_object();
  std::vector<std::string> raw;
  if (lookup) {
    CheckMembers(object, {"method", "url", "headers", "committed", "not_found", "provider_ref"},
                 field, raw);
  } else {
    CheckMembers(object, {"method", "url", "headers", "body"}, field, raw);
  }
  problems.AdoptFrom(raw);
  HttpRequestSpec spec;
  const json::value* method = object.if_contains("method");
  if (method == nullptr || !method->is_string() || kMethods.count(method->as_string()) == 0) {
    problems.Add(field + ".method", "must be one of GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH");
  } else {
    spec.method = std::string(method->as_string());
  }
  const json::value* url = object.if_contains("url");
  if (url == nullptr || !url->is_string()) {
    problems.Add(field + ".url", "must be a URL template, \"{env.BASE_URL}/path\"");
  } else {
    spec.url = TextTemplate::Parse(url->as_string(), scope, field + ".url", raw);
    problems.AdoptFrom(raw);
    // The scheme is checked here when it is written out; after an {env.X}, at call time.
    std::string text(url->as_string());
    const bool starts_with_env = text.rfind("{env.", 0) == 0;
    if (!starts_with_env && text.rfind("http://", 0) != 0) {
      problems.Add(field + ".url",
                   text.rfind("https://", 0) == 0
                       ? "https is not supported; use http:// (behind a TLS-terminating proxy)"
                       : "must start with http:// or with an {env.NAME} that holds the base URL");
    }
  }
  ParseHeaders(object.if_contains("headers"), field, scope, spec, problems);
  if (!lookup) ParseBody(object.if_contains("body"), field, scope, spec, problems);
  return spec;
}

// `contract` is null when it did not load: the checks against it are skipped.
std::vector<HttpOutcomeRule> ParseOutcomes(const json::value* value, const ToolContract* contract,
                                           ToolProblems& problems) {
  std::vector<HttpOutcomeRule> rules;
  if (value == nullptr || !value->is_array() || value->as_array().empty()) {
    problems.Add("outcomes", "must be a non-empty array of {\"status\": [...], \"means\": "
                             "\"success\"|\"definitive\"|\"retryable\"|\"unknown\"}");
    return rules;
  }
  std::map<int, std::size_t> claimed;  // status -> the outcome that lists it
  bool any_success = false;
  const json::array& items = value->as_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string field = "outcomes[" + std::to_string(i) + "]";
    if (!items[i].is_object()) {
      problems.Add(field, "must be an object with \"status\" and \"means\"");
      continue;
    }
    const json::object& object = items[i].as_object();
    std::vector<std::string> raw;
    CheckMembers(object, {"status", "means", "code"}, field, raw);
    problems.AdoptFrom(raw);
    HttpOutcomeRule rule;
    auto statuses = ParseStatuses(object.if_contains("status"), field + ".status", problems);
    const json::value* means = object.if_contains("means");
    const std::string meaning = means && means->is_string() ? std::string(means->as_string()) : "";
    if (meaning == "success") {
      rule.means = HttpOutcomeMeaning::kSuccess;
      any_success = true;
    } else if (meaning == "accepted") {
      rule.means = HttpOutcomeMeaning::kAccepted;
      any_success = true;
      if (contract != nullptr && !contract->completion.declared()) {
        problems.Add(field + ".means", "\"accepted\" needs a contract that declares completion "
                                       "(completion.deadline_ms: how long to wait for the "
                                       "provider's report)");
      }
    } else if (meaning == "definitive") {
      rule.means = HttpOutcomeMeaning::kDefinitive;
    } else if (meaning == "retryable") {
      rule.means = HttpOutcomeMeaning::kRetryable;
    } else if (meaning == "unknown") {
      rule.means = HttpOutcomeMeaning::kUnknown;
    } else {
      problems.Add(field + ".means", "must be \"success\", \"accepted\", \"definitive\", "
                                     "\"retryable\" or \"unknown\"");
    }
    if (const json::value* code = object.if_contains("code")) {
      if (!code->is_string() || code->as_string().empty()) {
        problems.Add(field + ".code", "must be a non-empty string");
      } else {
        rule.code = std::string(code->as_string());
      }
    }
    if ((rule.means == HttpOutcomeMeaning::kSuccess ||
         rule.means == HttpOutcomeMeaning::kAccepted) && !rule.code.empty()) {
      problems.Add(field + ".code", "a success has no failure code; remove it");
    }
    // A non_repeatable_write retries only the codes its contract lists: a retryable status
    // with another code would silently become unknown.
    if (rule.means == HttpOutcomeMeaning::kRetryable && contract != nullptr &&
        contract->side_effect == SideEffect::kNonRepeatableWrite) {
      const auto& listed = contract->retry.retryable_codes;
      if (rule.code.empty()) {
        problems.Add(field + ".code", "a retryable outcome of a non_repeatable_write needs an "
                                      "explicit code listed in contract.retry.retryable_codes");
      } else if (std::find(listed.begin(), listed.end(), rule.code) == listed.end()) {
        problems.Add(field + ".code", "'" + rule.code + "' is not in contract.retry."
                                      "retryable_codes, so a non_repeatable_write would treat "
                                      "it as unknown; list it there or say \"unknown\"");
      }
    }
    if (statuses) {
      // The first outcome that lists a status wins, so a class ("4xx") may follow single
      // statuses; the same single status twice is a mistake.
      for (const StatusRange& range : *statuses) {
        if (range.low != range.high) continue;
        auto [at, fresh] = claimed.emplace(range.low, i);
        if (!fresh && at->second != i) {
          problems.Add(field + ".status", "status " + std::to_string(range.low) +
                                              " is already mapped by outcomes[" +
                                              std::to_string(at->second) + "]");
        }
      }
      rule.statuses = std::move(*statuses);
    }
    rules.push_back(std::move(rule));
  }
  if (!any_success) problems.Add("outcomes", "no status means \"success\" (or \"accepted\")");
  return rules;
}


// `lookup`: required exactly when the contract reconciles by lookup (known only when the
// contract loaded).
void ParseLookup(const json::value* lookup, bool contract_ok, const TemplateScope& scope,
                 HttpToolSpec& spec, ToolProblems& tp) {
  const bool wants_lookup = contract_ok && spec.contract.reconcile.mode == ReconcileMode::kLookup;
  if (wants_lookup && lookup == nullptr) {
    tp.Add("lookup", "missing: the contract reconciles by lookup (reconcile.mode \"lookup\"), "
                     "so the tool needs a lookup request");
    return;
  }
  if (contract_ok && !wants_lookup && lookup != nullptr) {
    tp.Add("lookup", "the contract does not reconcile by lookup (reconcile.mode is not "
                     "\"lookup\"): remove it or change the contract");
    return;
  }
  if (lookup == nullptr) return;
  auto request = ParseRequest(lookup, "lookup", scope, true, tp);
  if (!request || !lookup->is_object()) return;
  HttpLookupSpec lookup_spec;
  lookup_spec.request = std::move(*request);
  const json::object& l = lookup->as_object();
  if (auto s = ParseStatuses(l.if_contains("committed"), "lookup.committed", tp)) {
    lookup_spec.committed = std::move(*s);
  }
  if (auto s = ParseStatuses(l.if_contains("not_found"), "lookup.not_found", tp)) {
    lookup_spec.not_found = std::move(*s);
  }
  CheckPointer(l, "provider_ref", "lookup.provider_ref", lookup_spec.provider_ref, tp);
  if (!lookup_spec.request.url.RefersToOperationId()) {
    tp.Add("lookup.url", "must find the operation by its id: put {operation_id} in it");
  }
  spec.lookup = std::move(lookup_spec);
}

// A write must send its idempotency key, in the named header or through a template.
void CheckKeySent(const HttpToolSpec& spec, ToolProblems& tp) {
  if (spec.contract.side_effect == SideEffect::kReadOnly || !spec.idempotency_key_header.empty()) {
    return;
  }
  bool sent = spec.request.url.RefersToOperationId() ||
              (spec.request.body_template && spec.request.body_template->RefersToOperationId());
  for (const auto& [header, value] : spec.request.headers) {
    sent = sent || value.RefersToOperationId();
  }
  if (!sent) {
    tp.Add(std::string(kHttpIdempotencyHeaderMember),
           "a " + std::string(SideEffectName(spec.contract.side_effect)) +
               " must send the operation id as its idempotency key: name the header, or put "
               "{operation_id} in the URL, a header or the body");
  }
}

}  // namespace

void CheckMembers(const json::object& object, std::initializer_list<std::string_view> allowed,
                  const std::string& field, std::vector<std::string>& problems) {
  for (const auto& member : object) {
    bool known = false;
    for (std::string_view name : allowed) known = known || member.key() == name;
    if (known) continue;
    std::string expected;
    for (std::string_view name : allowed) expected += (expected.empty() ? "" : ", ") + std::string(name);
    problems.push_back(field + ": unknown member '" + std::string(member.key()) + "' (expected " +
                       expected + ")");
  }
}

std::optional<HttpToolSpec> ParseHttpTool(const json::value& tool, std::size_t index,
                                          const std::map<std::string, std::string>& secrets,
                                          const EnvLookup& env,
                                          std::vector<std::string>& problems) {
  const std::string at = "tools[" + std::to_string(index) + "]";
  if (!tool.is_object()) {
    problems.push_back(at + ": must be an object with \"contract\", \"request\" and \"outcomes\"");
    return std::nullopt;
  }
  const json::object& object = tool.as_object();
  std::string name = "?";
  const json::value* contract_json = object.if_contains("contract");
  if (contract_json && contract_json->is_object()) {
    if (const json::value* n = contract_json->as_object().if_contains("name"); n && n->is_string()) {
      name = std::string(n->as_string());
    }
  }
  ToolProblems tp{"tool '" + name + "' (" + at + "): ", problems};
  std::vector<std::string> raw;
  CheckMembers(object, {"description", "contract", "request", kHttpIdempotencyHeaderMember,
                        "outcomes", "reply", "lookup"},
               "(tool)", raw);
  tp.AdoptFrom(raw);

  HttpToolSpec spec;
  bool contract_ok = false;  // the checks that depend on the contract run only when it is
  if (contract_json == nullptr) {
    tp.Add("contract", "missing: the tool's contract, as `reckon contracts` prints it");
  } else {
    Result<ToolContract> contract = ContractFromJson(*contract_json);
    if (!contract) {
      tp.Add("contract", contract.error().message());
    } else if (Result<void> valid = ValidateContract(contract.value()); !valid) {
      tp.Add("contract", valid.error().message());
    } else if (contract.value().heartbeat_timeout.count() != 0) {
      // One HTTP exchange has nothing to report progress on; the attempt deadline bounds it.
      tp.Add("contract.heartbeat_timeout_ms", "an HTTP tool does not heartbeat, so its attempts "
                                              "would all be lost; remove it (attempt_timeout_ms "
                                              "bounds the call)");
    } else {
      spec.contract = std::move(contract).value();
      contract_ok = true;
    }
  }
  TemplateScope scope{env, &secrets, contract_ok ? &spec.contract.input_schema : nullptr};

  if (auto request = ParseRequest(object.if_contains("request"), "request", scope, false, tp)) {
    spec.request = std::move(*request);
  }
  if (const json::value* header = object.if_contains(kHttpIdempotencyHeaderMember)) {
    if (!header->is_string() || header->as_string().empty()) {
      tp.Add(std::string(kHttpIdempotencyHeaderMember),
             "must be a header name, such as \"Idempotency-Key\"");
    } else {
      spec.idempotency_key_header = std::string(header->as_string());
    }
  }
  spec.outcomes = ParseOutcomes(object.if_contains("outcomes"),
                               contract_ok ? &spec.contract : nullptr, tp);
  if (const json::value* reply = object.if_contains("reply")) {
    if (!reply->is_object()) {
      tp.Add("reply", "must be an object with \"provider_ref\" and/or \"error_code\"");
    } else {
      CheckMembers(reply->as_object(), {"provider_ref", "error_code"}, "reply", raw);
      tp.AdoptFrom(raw);
      CheckPointer(reply->as_object(), "provider_ref", "reply.provider_ref", spec.provider_ref, tp);
      CheckPointer(reply->as_object(), "error_code", "reply.error_code", spec.error_code, tp);
    }
  }
  for (std::size_t i = 0; i < spec.outcomes.size(); ++i) {
    if (spec.outcomes[i].means == HttpOutcomeMeaning::kAccepted && spec.provider_ref.empty()) {
      tp.Add("reply.provider_ref", "outcomes[" + std::to_string(i) + "] means \"accepted\": "
                                   "name where the provider's reference is in the reply");
    }
  }
  ParseLookup(object.if_contains("lookup"), contract_ok, scope, spec, tp);
  if (contract_ok) CheckKeySent(spec, tp);
  if (tp.Any()) return std::nullopt;
  return spec;
}

}  // namespace reckon::tools
