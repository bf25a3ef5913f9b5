#include "reckon/base/intent_hash.h"

#include "reckon/base/jcs.h"

namespace reckon {
namespace {

// Removes the member named by the dotted `path` if every step up to it is an object.
void RemovePath(boost::json::value& root, std::string_view path) {
  boost::json::value* current = &root;
  while (true) {
    boost::json::object* object = current->if_object();
    if (object == nullptr) return;
    const std::size_t dot = path.find('.');
    if (dot == std::string_view::npos) {
      object->erase(path);
      return;
    }
    current = object->if_contains(path.substr(0, dot));
    if (current == nullptr) return;
    path.remove_prefix(dot + 1);
  }
}

}  // namespace

std::string ToHex(const Sha256Digest& digest) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (const std::uint8_t byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0xF];
  }
  return out;
}

boost::json::value RemoveSecretFields(const boost::json::value& input,
                                      std::span<const std::string> secret_fields) {
  boost::json::value copy = input;
  for (const std::string& path : secret_fields) RemovePath(copy, path);
  return copy;
}

Result<std::string> IntentHash(const boost::json::value& input,
                               std::span<const std::string> secret_fields) {
  RECKON_TRY(const std::string canonical,
             CanonicalizeJson(RemoveSecretFields(input, secret_fields)));
  return ToHex(Sha256(canonical));
}

}  // namespace reckon
