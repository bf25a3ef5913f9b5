// Payload keys: the keys the AES-256-GCM payload codec (aes_gcm_codec.h) seals and opens
// journal payloads with, and the text file they are read from.
//
// The key file: one key per line, `ID HEX [seal]`; `#` starts a comment, blank lines are
// ignored.
//
//   # reckon payload keys: mode 0600, never in the repository, never beside the journal's backups
//   k2025-01 3b8a...64 hexadecimal digits...e0
//   k2025-07 91c4...64 hexadecimal digits...7d
//
//   ID    1 to 32 characters among A-Z a-z 0-9 . _ -; journaled in the clear with each payload
//   HEX   the key, 256 random bits as 64 hexadecimal digits (`openssl rand -hex 32`)
//   seal  at most one line: this key seals new payloads. Without it, the last line does.
//
// Every key opens what it sealed, so rotation is: append a new line and restart; payloads
// sealed before stay readable with the older lines. Never remove a key while a journal holds
// payloads it sealed (docs/SECURITY.md, "Payloads at rest").
//
// The file is a private file (base/private_file.h): a regular file that neither group nor
// others may read or write (chmod 600), as ssh requires of its private keys. Messages about a malformed line give the line's
// number, never its content: it may hold a key.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::storage {

// One key. The bytes are wiped when the key is destroyed. Movable, not copyable.
struct PayloadKey {
  std::string id;
  std::array<unsigned char, 32> bytes{};

  PayloadKey() = default;
  PayloadKey(std::string key_id, const std::array<unsigned char, 32>& key_bytes)
      : id(std::move(key_id)), bytes(key_bytes) {}
  ~PayloadKey();
  PayloadKey(PayloadKey&& other) noexcept;
  PayloadKey& operator=(PayloadKey&& other) noexcept;
  PayloadKey(const PayloadKey&) = delete;
  PayloadKey& operator=(const PayloadKey&) = delete;
};

struct PayloadKeySet {
  std::vector<PayloadKey> keys;  // in file order, at least one, ids distinct
  std::size_t sealing = 0;       // index of the key that seals
  std::string source;            // the file they came from, for messages
};

// True for an id of 1 to 32 characters among A-Z a-z 0-9 . _ -.
bool IsValidPayloadKeyId(std::string_view id);

// Parses key-file text; `source` names it in messages. kInvalidArgument naming the line for a
// malformed line, a duplicate id, two `seal` marks, or a file without a key.
Result<PayloadKeySet> ParsePayloadKeys(std::string_view text, std::string source);

// Reads and parses the key file at `path`. kNotFound if it does not exist; kFailedPrecondition
// if group or others may read or write it, or it is not a regular file; kUnavailable if it
// cannot be read; the parser's errors otherwise. The text read is wiped once parsed.
Result<PayloadKeySet> ReadPayloadKeyFile(const std::string& path);

}  // namespace reckon::storage
