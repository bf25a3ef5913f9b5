// PayloadCodec: encrypts the payloads the journal holds (workflow inputs and results, tool
// inputs and outputs, signal payloads, marker values, error messages and people's notes), so a
// copied journal file does not reveal them. Ids, hashes, states, codes and times stay in the
// clear: the journal's tables and indexes are read without the codec (docs/JOURNAL_FORMAT.md,
// "Sealed payloads"; docs/SECURITY.md, "Payloads at rest").
//
// The journal seals and opens payloads through this interface (storage/event_codec.h); it
// never learns the algorithm or the keys. Implementation: storage/crypto/aes_gcm_codec.h
// (AES-256-GCM, keys from a key file). Whoever opens a journal owns its codec and keeps it
// alive until the journal is closed (SqliteJournalOptions::payload_codec).
//
// Threading: Seal and Open are const and safe to call from several threads at once (the
// server's commit connection and its reader share one codec).
#pragma once

#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::storage {

// A payload as the journal stores it: the id of the key that sealed it (journaled in the
// clear, so that a rotated key file still opens it) and the codec's sealed bytes.
struct SealedPayload {
  std::string key_id;
  std::string box;  // AES-256-GCM: 12-byte nonce, ciphertext, 16-byte tag
};

class PayloadCodec {
 public:
  virtual ~PayloadCodec() = default;

  // Encrypts and authenticates `plaintext` under the sealing key, bound to `context`: bytes
  // that are authenticated but not stored (the event's place in the journal), so a box moved
  // to another event does not open. Errors: kInternal (the crypto library failed).
  virtual Result<SealedPayload> Seal(std::string_view plaintext,
                                     std::string_view context) const = 0;

  // The plaintext of a box sealed with key `key_id` under `context`. Errors:
  // kFailedPrecondition naming `key_id` when this codec does not hold that key (add it back to
  // the key file); kCorruption when the box fails authentication (altered, truncated, or moved
  // from another event). Never returns bytes that did not authenticate.
  virtual Result<std::string> Open(std::string_view key_id, std::string_view box,
                                   std::string_view context) const = 0;

  // The id of the key new payloads are sealed with.
  virtual const std::string& sealing_key_id() const = 0;
};

}  // namespace reckon::storage
