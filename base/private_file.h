// Private files: the files that hold a secret (API tokens, payload keys, TLS private keys).
// Every one Reckon reads goes through ReadPrivateFile, and every one it writes through
// WritePrivateFile, so that the rules live here once.
//
// Reading: the file (a symbolic link is followed: orchestrators mount secrets as links) must
// be a regular file that neither group nor others may read, write or execute (mode 0600 or
// 0400, as ssh requires of private keys); otherwise it is refused with the chmod that fixes
// it. The check and the read use one descriptor, so the file checked is the file read.
//
// Writing: the content goes to a new file created beside `path` with O_CREAT | O_EXCL (which
// never follows a symbolic link) at mode 0600, is fsynced, and is renamed over `path`. A
// rename replaces a name and never writes through it, so a link or a file someone else
// prepared is never written into, and no reader sees a half-written secret. An existing
// `path` is replaced only when it is a regular file of this user that no other user may
// access; anything else (a symbolic link, another user's file, a file group or others may
// read or write, a directory) is refused with a message naming the file and what to do, and
// nothing is written. Limit: in a directory others may write to and that is not sticky (unlike
// /tmp), they can still swap names between the check and the rename; keep secrets in a
// directory only you can write to.
//
// Plain functions over the file system; thread-safe as the file system is.
#pragma once

#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon {

// The content of the private file at `path`; `what` names it in messages ("token file",
// "--tls-key"). Errors: kNotFound when it does not exist; kFailedPrecondition when it is not a
// regular file or group or others may access it (the message gives `chmod 600 PATH`);
// kUnavailable when it cannot be read. The caller wipes the content when done with it.
Result<std::string> ReadPrivateFile(const std::string& path, std::string_view what);

// Writes `content` to `path` as the header says (mode 0600, new file renamed over). Errors:
// kFailedPrecondition when an existing `path` may not be replaced (the message says why and
// what to do; nothing was written); kUnavailable on I/O errors (nothing is left behind but,
// at worst, the old file).
Result<void> WritePrivateFile(const std::string& path, std::string_view content,
                              std::string_view what);

// Ok when WritePrivateFile(path, ...) would create or replace `path` now (its checks, the same
// errors), so that a caller can refuse before it makes the secret (e.g. before a server issues
// a token that could then not be kept).
Result<void> CheckPrivateFileTarget(const std::string& path, std::string_view what);

}  // namespace reckon
