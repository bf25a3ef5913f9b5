// Where a client (the CLI, a worker process) finds its API token (docs/SECURITY.md):
//   1. the file given on its command line (--token-file FILE),
//   2. else the file named by $RECKON_TOKEN_FILE,
//   3. else ~/.config/reckon/token, if it exists;
//   4. else none: the request goes without a credential, and a server that requires one
//      refuses it saying how to pass one.
// A token is never taken from the command line itself (it would show in `ps` and shell
// history). A token file must not be readable by group or others (like ssh keys): one that is
// is refused with the chmod that fixes it.
//
// Plain functions over the file system and the environment.
#pragma once

#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::api {

// The token, or "" when none of the places has one. Errors (kInvalidArgument or
// kFailedPrecondition) name the file: missing when named explicitly, unreadable, readable by
// others, or not holding a token.
Result<std::string> LoadClientToken(std::string_view token_file_flag);

// Reads the token in `path` (the checks above).
Result<std::string> ReadTokenFile(const std::string& path);

// Writes `token` to `path` with mode 0600 (created, or truncated), plus a newline.
Result<void> WriteTokenFile(const std::string& path, std::string_view token);

}  // namespace reckon::api
