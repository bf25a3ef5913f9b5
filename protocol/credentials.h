// Where a client (the CLI, a worker process) finds its API token (docs/SECURITY.md):
//   1. the file given on its command line (--token-file FILE),
//   2. else the file named by $RECKON_TOKEN_FILE,
//   3. else ~/.config/reckon/token, if it exists;
//   4. else none: the request goes without a credential, and a server that requires one
//      refuses it saying how to pass one.
// A token is never taken from the command line itself (it would show in `ps` and shell
// history). A token file is a private file (base/private_file.h): one that group or others
// may access is refused with the chmod that fixes it, and a token is written only into a
// new file of this user (never through a link, never into another user's file).
//
// Plain functions over the file system and the environment.
#pragma once

#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::api {

// The token, or "" when none of the places has one. Errors name the file: kNotFound when it
// is missing though named explicitly, kFailedPrecondition when others may access it,
// kUnavailable when it cannot be read, kInvalidArgument when it holds no token.
Result<std::string> LoadClientToken(std::string_view token_file_flag);

// Reads the token in `path` (ReadPrivateFile, then the token's syntax).
Result<std::string> ReadTokenFile(const std::string& path);

// Writes `token` and a newline to `path` through WritePrivateFile (mode 0600, a new file
// renamed over). kFailedPrecondition when `path` exists and is a link, not a regular file,
// another user's, or accessible by others: the message says what to do.
Result<void> WriteTokenFile(const std::string& path, std::string_view token);

}  // namespace reckon::api
