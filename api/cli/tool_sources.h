// Where a command that hosts tools (`reckon worker`, embedded `reckon plan run`) gets them:
// the tool sources named by its flags. Today one kind:
//
//   --tools FILE   HTTP tools declared in a tools file (tools/http/http_tools_file.h;
//                  docs/TOOLS.md), repeatable
//
// A new kind of source (MCP servers: --mcp 'COMMAND ARGS', --mcp-url URL --contracts FILE)
// adds its fields to ToolSourceFlags, its flags to AddToolSourceFlags and its loading to
// LoadToolSources; the commands that call them do not change.
//
// LoadToolSources checks every source before it registers anything: all the problems of all
// the files come back in one kInvalidArgument error (exit 2), and a bad source leaves the
// registry empty, so a command stops before it connects or journals anything.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/tools/http/http_template.h"
#include "reckon/worker/tool.h"

namespace reckon::cli {

struct ToolSourceFlags {
  std::vector<std::string> tools_files;  // --tools

  bool Empty() const { return tools_files.empty(); }
};

// Adds the flags of every tool source to `command`; `flags` must outlive it.
void AddToolSourceFlags(CLI::App* command, ToolSourceFlags& flags);

// Loads every source and registers its tools in `registry` (see above). Environment variables
// that tools files refer to come from `env`.
Result<void> LoadToolSources(const ToolSourceFlags& flags, ToolRegistry& registry,
                             const tools::EnvLookup& env);

}  // namespace reckon::cli
