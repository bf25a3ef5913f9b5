#include "reckon/api/server/http/console_sessions.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace reckon::api {
namespace {

// 256 random bits as 64 hex digits. RAND_bytes fails only when the OS has no entropy to give,
// which no request can fix: a bug-class failure, thrown and answered 500.
std::string RandomHex() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    throw std::runtime_error("RAND_bytes failed: no randomness for a session id");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

}  // namespace

ConsoleSessions::ConsoleSessions(std::chrono::seconds lifetime, std::size_t max_sessions)
    : lifetime_(lifetime), max_sessions_(max_sessions) {}

std::pair<std::string, ConsoleSessions::Session> ConsoleSessions::Create(std::string token) {
  while (sessions_.size() >= max_sessions_ && !by_expiry_.empty()) {
    sessions_.erase(by_expiry_.begin()->second);
    by_expiry_.erase(by_expiry_.begin());
  }
  Session session{std::move(token), RandomHex(), Clock::now() + lifetime_};
  std::string id = RandomHex();
  sessions_[id] = session;
  by_expiry_.emplace(session.expires, id);
  return {std::move(id), std::move(session)};
}

std::optional<ConsoleSessions::Session> ConsoleSessions::Find(const std::string& id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  if (it->second.expires <= Clock::now()) {
    Remove(id);
    return std::nullopt;
  }
  return it->second;
}

void ConsoleSessions::Remove(const std::string& id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  auto range = by_expiry_.equal_range(it->second.expires);
  for (auto e = range.first; e != range.second; ++e) {
    if (e->second == id) {
      by_expiry_.erase(e);
      break;
    }
  }
  sessions_.erase(it);
}

bool SameSecret(const std::string& a, const std::string& b) {
  return a.size() == b.size() && !a.empty() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace reckon::api
