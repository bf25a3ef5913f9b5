#include "reckon/api/server/build_routing.h"

#include <algorithm>
#include <cctype>

namespace reckon::api {

bool CanServe(const WorkerBuild& worker, const std::optional<std::string>& run_build) {
  if (!run_build || run_build->empty()) return true;
  return *run_build == worker.build_id || worker.compatible.count(*run_build) != 0;
}

std::optional<std::string> BuildOfHistory(std::span<const storage::Event> history) {
  for (const storage::Event& event : history) {
    if (auto* started = std::get_if<storage::WorkflowTaskStarted>(&event.body)) {
      return started->build_id;
    }
  }
  return std::nullopt;
}

Result<void> CheckBuildId(const std::string& build_id, const std::string& field,
                          bool allow_empty) {
  constexpr std::size_t kMaxBytes = 128;
  if (build_id.empty()) {
    if (allow_empty) return Ok();
    return Err(Errc::kInvalidArgument, field + " is empty; name a build id");
  }
  if (build_id.size() > kMaxBytes) {
    return Err(Errc::kInvalidArgument, field + " is longer than 128 bytes");
  }
  const bool valid = std::all_of(build_id.begin(), build_id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("._-+:/@").find(c) != std::string_view::npos;
  });
  if (!valid) {
    return Err(Errc::kInvalidArgument,
               field + " '" + build_id +
                   "' has a character other than letters, digits and . _ - + : / @");
  }
  return Ok();
}

}  // namespace reckon::api
