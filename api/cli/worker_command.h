// `reckon worker`: a generic worker for server mode. It hosts the plan workflow (agent plans,
// worker/plan_workflow.h) and the tools its tool sources declare (api/cli/tool_sources.h:
// --tools FILE, ...), connects to every --server named, and runs what they hand it until
// SIGTERM/SIGINT. No C++ is written for it: the tools are HTTP calls under contracts.
//
//   reckon worker --server HOST:PORT [--server ...] --tools FILE [--tools FILE ...]
//                 [--id NAME] [--tool-slots N] [--workflow-slots N] [--token-file PATH]
//                 [--build-id ID [--compatible-with ID]...] [TLS flags: --ca, --tls, ...]
//
// A cluster: name every server; the worker holds one connection per server, with the same
// tools (as refund-worker does).
//
// Exit codes: 0 stopped by a signal; 1 a server refused the registration (the message says
// why, e.g. a contract that differs from the one it journaled); 2 bad usage, a bad tools file
// (every problem listed) or an unreadable token, before anything connects.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

void AddWorkerCommand(CLI::App& app, CommandEnv& env);

}  // namespace reckon::cli
