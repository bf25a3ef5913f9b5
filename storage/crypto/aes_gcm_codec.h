// AesGcmCodec: the PayloadCodec (storage/payload_codec.h) of Reckon: AES-256-GCM through
// OpenSSL, with the keys of a payload key file (payload_keys.h).
//
// Seal: a fresh 96-bit random nonce per payload (OpenSSL's RAND_bytes, drawn 64 nonces at a
// time: one call per nonce cost more than the sealing), the context as additional
// authenticated data, a 128-bit tag; box = nonce || ciphertext || tag, under the sealing key,
// whose id the journal stores beside the box. Open: the key named by the id,
// the same context; a box that does not authenticate is refused, its bytes never returned.
//
// Limits: random nonces keep the chance of a repeat negligible up to 2^32 payloads per key
// (NIST SP 800-38D); rotate the sealing key well before that (docs/SECURITY.md).
//
// Seal reuses OpenSSL contexts keyed with the sealing key (a small pool), so the key schedule
// is not recomputed for every payload; Open keys a fresh context per call.
//
// Threading: Seal and Open may run on several threads at once (the nonce and context pools
// have a mutex; the keys are immutable after construction). Not fork-safe: a forked child
// must build its own codec, or it would draw the parent's buffered nonces. Owned by whoever
// opens the journal, which keeps it alive until the journal is closed.
#pragma once

#include <memory>
#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/crypto/payload_keys.h"
#include "reckon/storage/payload_codec.h"

namespace reckon::storage {

class AesGcmCodec final : public PayloadCodec {
 public:
  // kInternal if OpenSSL has no AES-256-GCM.
  static Result<std::unique_ptr<AesGcmCodec>> Create(PayloadKeySet keys);
  ~AesGcmCodec() override;
  AesGcmCodec(const AesGcmCodec&) = delete;
  AesGcmCodec& operator=(const AesGcmCodec&) = delete;

  Result<SealedPayload> Seal(std::string_view plaintext, std::string_view context) const override;
  Result<std::string> Open(std::string_view key_id, std::string_view box,
                           std::string_view context) const override;
  const std::string& sealing_key_id() const override;

 private:
  struct Cipher;  // OpenSSL's AES-256-GCM, fetched once, and the pools (aes_gcm_codec.cc)
  AesGcmCodec(PayloadKeySet keys, std::unique_ptr<Cipher> cipher);
  const PayloadKey* Find(std::string_view key_id) const;
  std::string KnownIds() const;

  PayloadKeySet keys_;
  std::unique_ptr<Cipher> cipher_;  // its pools change under its mutex, even in const calls
};

// Reads the key file at `path` (ReadPayloadKeyFile) and builds the codec over it. The
// errors of both, each naming the file.
Result<std::unique_ptr<PayloadCodec>> OpenPayloadKeyFile(const std::string& path);

}  // namespace reckon::storage
