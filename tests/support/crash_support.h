// What the multi-process tests (crash loops, plan runs) share: knobs from the environment,
// children that announce where they listen, and keeping a failed run's files.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "reckon/base/error.h"
#include "tests/support/subprocess.h"

namespace reckon::testing {

// The number in environment variable `name`, or `fallback` when it is unset or empty.
std::uint64_t EnvNumber(const char* name, std::uint64_t fallback);

// A child whose first stdout line is "listening on 127.0.0.1:PORT" (payments-provider,
// fake-chat-server).
struct ListeningProcess {
  Subprocess process;
  std::uint16_t port = 0;
};

// Starts `path` and reads that line, waiting at most `timeout`. Errc::kInternal quoting the
// line when the child printed something else.
Result<ListeningProcess> StartListening(const std::string& path, SubprocessOptions options,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(10));

// The last `max_chars` characters of a file (all of it if shorter), for failure messages.
std::string Tail(const std::filesystem::path& path, std::size_t max_chars = 3000);

// Copies `dir` to $TMPDIR/`name` (or /tmp/`name`) for a post-mortem; returns where, or why not.
std::string KeepEvidence(const std::filesystem::path& dir, const std::string& name);

}  // namespace reckon::testing
