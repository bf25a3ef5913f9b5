// Templates of a tools file (tools/http/http_tools_file.h): strings with references in
// braces, and JSON values whose strings are such templates.
//
//   {input.PATH}    a member of the tool's input by dotted path (contract/field_path.h)
//   {secret.NAME}   a secret of the tools file, read from the worker's environment or a file
//   {env.NAME}      an environment variable of the worker, read once when the file is loaded
//                   (base URLs: "{env.PAYMENTS_URL}/refunds")
//   {operation_id}  the operation id, the idempotency key of every attempt
//   {{ and }}       a literal brace
//
// Env references are replaced by their values at Parse, so a missing variable is a load
// error, never a failed call. Secrets are checked to exist at Parse and filled in at Expand;
// their values never enter a template, an error message or a log.
//
// In a JSON template, a string that is exactly one reference becomes the referenced value
// itself (an integer stays an integer); an object member whose whole value is an {input.X}
// that the input lacks is left out (optional fields). Any other string is text with the values
// interpolated (strings as they are, numbers and booleans as JSON).
//
// Immutable after Parse; Expand is thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::tools {

// Reads an environment variable; nullopt when it is not set. Passed in (no getenv inside), so
// that tests choose the environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// What a template may refer to at Parse time.
struct TemplateScope {
  EnvLookup env;
  const std::map<std::string, std::string>* secrets = nullptr;  // declared secrets by name
  // The tool's input schema, to check {input.X} paths; null: not checked.
  const boost::json::value* input_schema = nullptr;
};

// What a template is expanded with.
struct TemplateValues {
  const boost::json::value* input = nullptr;  // null: no input (a lookup after a restart)
  std::string operation_id;
  const std::map<std::string, std::string>* secrets = nullptr;
};

enum class TemplateEscape { kNone, kUrl };  // kUrl: percent-encode every value put in

class TextTemplate {
 public:
  // Problems go to `problems`, each prefixed by `field` ("request.url: unknown secret 'x'").
  static TextTemplate Parse(std::string_view text, const TemplateScope& scope,
                            const std::string& field, std::vector<std::string>& problems);

  // Errc::kInvalidArgument naming the reference when an input member is missing or is not a
  // scalar.
  Result<std::string> Expand(const TemplateValues& values, TemplateEscape escape) const;

  // The single reference this template is, if it is exactly one ("{input.x}").
  bool IsSingleReference() const { return parts_.size() == 1 && parts_[0].kind != Kind::kText; }
  bool RefersToOperationId() const;
  bool RefersToInput() const;
  // The value of a single reference: the input member as it is (nullopt when absent), else a
  // string.
  Result<std::optional<boost::json::value>> ExpandSingle(const TemplateValues& values) const;

 private:
  enum class Kind { kText, kInput, kSecret, kOperationId };
  struct Part {
    Kind kind = Kind::kText;
    std::string text;  // the literal text, the input path or the secret name
  };
  std::vector<Part> parts_;
};

class JsonTemplate {
 public:
  static JsonTemplate Parse(const boost::json::value& value, const TemplateScope& scope,
                            const std::string& field, std::vector<std::string>& problems);
  Result<boost::json::value> Expand(const TemplateValues& values) const;
  bool RefersToOperationId() const;

 private:
  enum class Kind { kScalar, kString, kObject, kArray };
  Kind kind_ = Kind::kScalar;
  boost::json::value scalar_;
  TextTemplate text_;
  std::vector<std::pair<std::string, JsonTemplate>> members_;
  std::vector<JsonTemplate> items_;
};

}  // namespace reckon::tools
