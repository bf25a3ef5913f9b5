// A tools file: HTTP tools declared in JSON, with no code (docs/TOOLS.md, section 2; the JSON Schema
// is tools/http/tools.schema.json). Each tool is a contract (exactly as ContractToJson writes
// it), the request an attempt sends, how the reply's status maps to an outcome, where the
// provider's reference and error code are in the reply, and, for a contract that reconciles by
// lookup, the lookup request and how to read its reply.
//
//   {"secrets": {"card_token": {"env": "REFUND_CARD_TOKEN"}},          // or {"file": "PATH"}
//    "tools": [{
//      "contract": {...},
//      "request": {"method": "POST", "url": "{env.PAYMENTS_URL}/refunds",
//                  "headers": {"X-Client": "reckon"},
//                  "body": {"template": {"amount_cents": "{input.amount_cents}", ...}}},
//                  // or "body": {"input": "without_secret_fields"}
//      "idempotency_key_header": "Idempotency-Key",
//      "outcomes": [{"status": [200, 201], "means": "success"},   // or "accepted" (202)
//                   {"status": [429], "means": "retryable", "code": "rate_limited"},
//                   {"status": ["4xx"], "means": "definitive"}],
//      "reply": {"provider_ref": "/refund_id", "error_code": "/error"},
//      "lookup": {"method": "GET", "url": "...?key={operation_id}",
//                 "committed": [200], "not_found": [404], "provider_ref": "/refund_id"}}]}
//
// Templates: tools/http/http_template.h. The first outcome that lists a status wins (so a class
// such as "4xx" may follow single statuses; one status listed twice is refused). A status no
// outcome lists, and any transport failure after the whole request was sent, is unknown; a
// transport failure before that is retryable.
// Secrets come from the worker's environment or a file (a relative path is taken from the tools
// file's folder), never from the plan; they are read once, at load.
//
// Loading checks everything and reports every problem at once, each naming the tool and the
// field ("tool 'send_refund' (tools[0]): outcomes[1].code: ..."), in one kInvalidArgument
// error; a bad file yields no tools at all. The loaded file is immutable and thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/contract/contract.h"
#include "reckon/tools/http/http_template.h"

namespace reckon::tools {

// An inclusive range of statuses: 429 is {429, 429}, "4xx" is {400, 499}.
struct StatusRange {
  int low = 0;
  int high = 0;
  bool Contains(int status) const { return status >= low && status <= high; }
};

// kAccepted: the provider took the request and reports its result later (a webhook); only for
// a contract that declares `completion` (asynchronous completion, worker/tool.h ToolAccepted).
enum class HttpOutcomeMeaning { kSuccess, kAccepted, kDefinitive, kRetryable, kUnknown };

struct HttpOutcomeRule {
  std::vector<StatusRange> statuses;
  HttpOutcomeMeaning means = HttpOutcomeMeaning::kUnknown;
  // The failure code; empty: the reply's error code (HttpToolSpec::error_code), else
  // "http_<status>".
  std::string code;
};

struct HttpRequestSpec {
  std::string method;
  TextTemplate url;  // expanded with every value percent-encoded
  std::vector<std::pair<std::string, TextTemplate>> headers;
  std::optional<JsonTemplate> body_template;
  bool body_is_input = false;  // the whole input minus the contract's secret fields
};

struct HttpLookupSpec {
  HttpRequestSpec request;
  std::vector<StatusRange> committed;
  std::vector<StatusRange> not_found;
  std::string provider_ref;  // JSON Pointer into the reply; empty: none
};

struct HttpToolSpec {
  ToolContract contract;
  HttpRequestSpec request;
  std::string idempotency_key_header;  // empty: none (the key travels in a template)
  std::vector<HttpOutcomeRule> outcomes;
  std::string provider_ref;  // JSON Pointer into a success's (or acceptance's) reply body
  std::string error_code;    // JSON Pointer into a failure's reply body; empty: none
  std::optional<HttpLookupSpec> lookup;
};

struct HttpToolsFile {
  std::string source;  // the path it was read from, for messages
  std::map<std::string, std::string> secrets;  // name -> value; never printed
  std::vector<HttpToolSpec> tools;
};

// Reads and checks the file at `path`; environment variables come from `env`.
Result<std::shared_ptr<const HttpToolsFile>> LoadHttpToolsFile(const std::string& path,
                                                               const EnvLookup& env);

// The same for a parsed document. `base_dir` resolves relative secret file paths; `source`
// names the document in messages.
Result<std::shared_ptr<const HttpToolsFile>> ParseHttpToolsFile(const boost::json::value& document,
                                                                const std::string& base_dir,
                                                                const std::string& source,
                                                                const EnvLookup& env);

// The environment of this process (std::getenv), for programs.
EnvLookup ProcessEnvironment();

}  // namespace reckon::tools
