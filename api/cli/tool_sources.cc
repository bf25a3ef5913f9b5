#include "reckon/api/cli/tool_sources.h"

#include <map>
#include <memory>

#include "reckon/tools/http/http_tool.h"
#include "reckon/tools/http/http_tools_file.h"

namespace reckon::cli {

void AddToolSourceFlags(CLI::App* command, ToolSourceFlags& flags) {
  command->add_option("--tools", flags.tools_files,
                      "tools file (JSON, docs/TOOLS.md): HTTP tools under contracts; repeat it "
                      "for several files")
      ->allow_extra_args(false);  // one file per --tools, so that a plan file after it stays positional
}

Result<void> LoadToolSources(const ToolSourceFlags& flags, ToolRegistry& registry,
                             const tools::EnvLookup& env) {
  std::vector<std::shared_ptr<const tools::HttpToolsFile>> files;
  std::string problems;
  for (const std::string& path : flags.tools_files) {
    auto file = tools::LoadHttpToolsFile(path, env);
    if (!file) {
      problems += (problems.empty() ? "" : "\n") + file.error().message();
      continue;
    }
    files.push_back(std::move(file).value());
  }
  if (!problems.empty()) return Err(Errc::kInvalidArgument, std::move(problems));
  // Checked against each other before anything is registered.
  std::map<std::string, std::string> owner;  // tool name -> file
  for (const auto& file : files) {
    for (const tools::HttpToolSpec& spec : file->tools) {
      auto [at, fresh] = owner.emplace(spec.contract.name, file->source);
      if (!fresh) {
        problems += (problems.empty() ? "" : "\n") + std::string("tool '") + spec.contract.name +
                    "' is declared in both " + at->second + " and " + file->source +
                    "; keep one";
      }
    }
  }
  if (!problems.empty()) return Err(Errc::kInvalidArgument, std::move(problems));
  for (const auto& file : files) {
    RECKON_TRY(tools::RegisterHttpTools(registry, file));
  }
  return Ok();
}

}  // namespace reckon::cli
