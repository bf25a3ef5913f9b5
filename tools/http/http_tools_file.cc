#include "reckon/tools/http/http_tools_file.h"


#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "reckon/base/jcs.h"
#include "reckon/tools/http/http_tool_parse.h"

namespace reckon::tools {
namespace {

namespace json = boost::json;

void ParseSecret(const std::string& name, const json::value& spec, const std::string& base_dir,
                 const EnvLookup& env, std::map<std::string, std::string>& secrets,
                 std::vector<std::string>& problems) {
  const std::string field = "secrets." + name;
  if (!spec.is_object()) {
    problems.push_back(field + ": must be an object, {\"env\": NAME} or {\"file\": PATH}");
    return;
  }
  const json::object& object = spec.as_object();
  CheckMembers(object, {"env", "file", "description"}, field, problems);
  const json::value* env_name = object.if_contains("env");
  const json::value* file = object.if_contains("file");
  if ((env_name != nullptr) == (file != nullptr)) {
    problems.push_back(field + ": give exactly one of \"env\" and \"file\"");
    return;
  }
  std::string value;
  if (env_name != nullptr) {
    if (!env_name->is_string() || env_name->as_string().empty()) {
      problems.push_back(field + ".env: must be the name of an environment variable");
      return;
    }
    const std::string variable(env_name->as_string());
    std::optional<std::string> found = env ? env(variable) : std::nullopt;
    if (!found) {
      problems.push_back(field + ".env: the environment variable " + variable +
                         " is not set in the worker's environment");
      return;
    }
    value = *found;
  } else {
    if (!file->is_string() || file->as_string().empty()) {
      problems.push_back(field + ".file: must be a path");
      return;
    }
    std::filesystem::path path(std::string(file->as_string()));
    if (path.is_relative()) path = std::filesystem::path(base_dir) / path;
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    if (!in || !(text << in.rdbuf())) {
      problems.push_back(field + ".file: cannot read " + path.string());
      return;
    }
    value = text.str();
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
  }
  if (value.empty()) {
    problems.push_back(field + ": the secret is empty");
    return;
  }
  secrets[name] = std::move(value);
}

Error Problems(const std::string& source, const std::vector<std::string>& problems) {
  std::string message = "tools file " + source + ": " + std::to_string(problems.size()) +
                        " problem(s); nothing was started:";
  for (const std::string& problem : problems) message += "\n  " + problem;
  return Err(Errc::kInvalidArgument, std::move(message));
}

}  // namespace

Result<std::shared_ptr<const HttpToolsFile>> ParseHttpToolsFile(const json::value& document,
                                                                const std::string& base_dir,
                                                                const std::string& source,
                                                                const EnvLookup& env) {
  std::vector<std::string> problems;
  if (!document.is_object()) {
    return Problems(source, {"(root): must be an object with \"tools\" (and \"secrets\")"});
  }
  const json::object& root = document.as_object();
  CheckMembers(root, {"$schema", "description", "secrets", "tools"}, "(root)", problems);
  auto file = std::make_shared<HttpToolsFile>();
  file->source = source;
  if (const json::value* secrets = root.if_contains("secrets")) {
    if (!secrets->is_object()) {
      problems.push_back("secrets: must be an object of secret name -> {\"env\"|\"file\": ...}");
    } else {
      for (const auto& member : secrets->as_object()) {
        ParseSecret(std::string(member.key()), member.value(), base_dir, env, file->secrets,
                    problems);
      }
    }
  }
  // Secrets that failed to load are still declared, so that references to them are not
  // reported a second time as undeclared.
  std::map<std::string, std::string> declared = file->secrets;
  if (const json::value* secrets = root.if_contains("secrets"); secrets && secrets->is_object()) {
    for (const auto& member : secrets->as_object()) declared.emplace(std::string(member.key()), "");
  }
  const json::value* tools = root.if_contains("tools");
  if (tools == nullptr || !tools->is_array() || tools->as_array().empty()) {
    problems.push_back("tools: must be a non-empty array of tools");
  } else {
    std::set<std::string> names;
    const json::array& list = tools->as_array();
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::optional<HttpToolSpec> spec = ParseHttpTool(list[i], i, declared, env, problems);
      if (!spec) continue;
      if (!names.insert(spec->contract.name).second) {
        problems.push_back("tool '" + spec->contract.name + "' (tools[" + std::to_string(i) +
                           "]): contract.name: a second tool of this name");
        continue;
      }
      file->tools.push_back(std::move(*spec));
    }
  }
  if (!problems.empty()) return Problems(source, problems);
  return std::shared_ptr<const HttpToolsFile>(std::move(file));
}

Result<std::shared_ptr<const HttpToolsFile>> LoadHttpToolsFile(const std::string& path,
                                                               const EnvLookup& env) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  if (!in || !(text << in.rdbuf())) {
    return Err(Errc::kInvalidArgument, "tools file " + path + ": cannot be read; check the path");
  }
  // Strict: a member given twice is refused rather than one of them silently winning.
  Result<json::value> document = ParseStrictJson(text.str());
  if (!document) {
    return Err(Errc::kInvalidArgument, "tools file " + path + ": " + document.error().message() +
                                           "; nothing was started");
  }
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  return ParseHttpToolsFile(document.value(), base_dir.empty() ? "." : base_dir, path, env);
}

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

}  // namespace reckon::tools
