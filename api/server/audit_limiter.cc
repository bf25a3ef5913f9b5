#include "reckon/api/server/audit_limiter.h"

#include <spdlog/spdlog.h>

namespace reckon::api {

std::optional<std::uint64_t> AuditLimiter::Admit(const std::string& key, Clock::time_point now) {
  auto it = windows_.find(key);
  if (it == windows_.end()) {
    if (windows_.size() >= limits_.max_keys) DropOldest();
    windows_.emplace(key, Window{now, 1, 0});
    return 0;
  }
  Window& window = it->second;
  if (now - window.start >= limits_.window) {
    const std::uint64_t held_back = window.held_back;
    window = Window{now, 1, 0};
    return held_back;
  }
  if (window.written < limits_.burst) {
    ++window.written;
    return 0;
  }
  ++window.held_back;
  return std::nullopt;
}

void AuditLimiter::DropOldest() {
  auto oldest = windows_.begin();
  for (auto it = windows_.begin(); it != windows_.end(); ++it) {
    if (it->second.start < oldest->second.start) oldest = it;
  }
  if (oldest == windows_.end()) return;
  if (oldest->second.held_back > 0) {
    spdlog::warn("audit: {} more lines like '{}' were suppressed", oldest->second.held_back,
                 oldest->first);
  }
  windows_.erase(oldest);
}

std::string AuditLimiter::Suppressed(std::uint64_t held_back, std::string_view peer) {
  if (held_back == 0) return "";
  return " (" + std::to_string(held_back) + " more like this from " + std::string(HostOf(peer)) +
         " suppressed)";
}

std::string_view AuditLimiter::HostOf(std::string_view peer) {
  const auto colon = peer.rfind(':');
  return colon == std::string_view::npos ? peer : peer.substr(0, colon);
}

}  // namespace reckon::api
