#include "reckon/storage/payload_fields.h"

#include <cstdint>
#include <optional>
#include <variant>

namespace reckon::storage {
namespace {

void AppendLittleEndian(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void AppendLength(std::string& out, std::size_t n) {
  AppendLittleEndian(out, static_cast<std::uint32_t>(n), 4);
}

std::optional<std::uint32_t> ReadLength(std::string_view& in) {
  if (in.size() < 4) return std::nullopt;
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  }
  in.remove_prefix(4);
  return v;
}

}  // namespace

std::string SealContext(const EventPlace& place, int type_number) {
  std::string out = "reckon.sealed.v1";
  AppendLength(out, place.workflow_id.size());
  out += place.workflow_id;
  AppendLength(out, place.run_id.size());
  out += place.run_id;
  AppendLittleEndian(out, static_cast<std::uint64_t>(place.seq), 8);
  AppendLittleEndian(out, static_cast<std::uint32_t>(type_number), 4);
  return out;
}

bool HasPayload(const EventBody& body) {
  return std::visit(
      [](const auto& e) {
        using E = std::decay_t<decltype(e)>;
        for (auto member : PayloadMembers<E>::kMembers) {
          if (!(e.*member).empty()) return true;
        }
        return false;
      },
      body);
}

std::string PackPayload(const EventBody& body) {
  return std::visit(
      [](const auto& e) {
        using E = std::decay_t<decltype(e)>;
        std::string out;
        for (auto member : PayloadMembers<E>::kMembers) {
          AppendLength(out, (e.*member).size());
          out += e.*member;
        }
        return out;
      },
      body);
}

void ClearPayload(EventBody& body) {
  std::visit(
      [](auto& e) {
        using E = std::decay_t<decltype(e)>;
        for (auto member : PayloadMembers<E>::kMembers) (e.*member).clear();
      },
      body);
}

Result<void> UnpackPayload(std::string_view plaintext, EventBody& body) {
  const bool whole = std::visit(
      [&plaintext](auto& e) {
        using E = std::decay_t<decltype(e)>;
        bool first = true;
        for (auto member : PayloadMembers<E>::kMembers) {
          // Sealed before this member was added (payload_fields.h): it stays empty.
          if (!first && plaintext.empty()) break;
          first = false;
          std::optional<std::uint32_t> n = ReadLength(plaintext);
          if (!n || plaintext.size() < *n) return false;
          (e.*member).assign(plaintext.substr(0, *n));
          plaintext.remove_prefix(*n);
        }
        return plaintext.empty();
      },
      body);
  if (!whole) {
    return Err(Errc::kCorruption, std::string("the sealed payload of a ") +
                                      std::string(EventTypeName(body)) +
                                      " event does not hold its fields");
  }
  return Ok();
}

}  // namespace reckon::storage
