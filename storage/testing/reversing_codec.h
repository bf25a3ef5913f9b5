// ReversingCodec: a PayloadCodec for tests that "seals" by prefixing the context and reversing
// the bytes under key "k1": enough to see that a store keeps no clear payload and that a box
// opens only under its own context. Not a cipher. Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "reckon/storage/payload_codec.h"

namespace reckon::storage {

class ReversingCodec final : public PayloadCodec {
 public:
  Result<SealedPayload> Seal(std::string_view plaintext, std::string_view context) const override {
    std::string box(context);
    box += '|';
    box.append(plaintext.rbegin(), plaintext.rend());
    return SealedPayload{key_id_, std::move(box)};
  }
  Result<std::string> Open(std::string_view key_id, std::string_view box,
                           std::string_view context) const override {
    if (key_id != key_id_) return Err(Errc::kFailedPrecondition, "unknown key");
    if (box.substr(0, context.size()) != context || box.size() <= context.size()) {
      return Err(Errc::kCorruption, "box moved");
    }
    box.remove_prefix(context.size() + 1);
    return std::string(box.rbegin(), box.rend());
  }
  const std::string& sealing_key_id() const override { return key_id_; }

 private:
  std::string key_id_ = "k1";
};

}  // namespace reckon::storage
