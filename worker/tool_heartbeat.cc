#include "reckon/worker/tool_heartbeat.h"

#include <boost/json/serialize.hpp>
#include <spdlog/spdlog.h>

#include "reckon/engine/tool_dispatcher.h"

namespace reckon {

void ToolHeartbeat::Beat(const boost::json::value& details) {
  ++beats_;
  last_beat_ = std::chrono::steady_clock::now();
  if (details.is_null()) return;
  std::string text = boost::json::serialize(details);
  if (text.size() > kMaxHeartbeatDetailsBytes) {
    spdlog::warn("heartbeat details of {} bytes dropped: the limit is {} bytes", text.size(),
                 kMaxHeartbeatDetailsBytes);
    return;
  }
  details_json_ = std::move(text);
}

}  // namespace reckon
