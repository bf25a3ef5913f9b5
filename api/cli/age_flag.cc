#include "reckon/api/cli/age_flag.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

namespace reckon::cli {

Result<std::chrono::microseconds> ParseAge(std::string_view text, std::string_view flag) {
  auto bad = [&] {
    return Err(Errc::kInvalidArgument,
               std::string(flag) + " '" + std::string(text) +
                   "' is not an age: give a positive number and a unit, e.g. 30d, 12h, 15m, "
                   "90s or 500ms");
  };
  std::int64_t number = 0;
  const char* end = text.data() + text.size();
  auto [unit, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc() || number <= 0) return bad();
  const std::string_view suffix(unit, static_cast<std::size_t>(end - unit));
  std::int64_t micros_per = 0;
  if (suffix == "ms") {
    micros_per = 1000;
  } else if (suffix == "s") {
    micros_per = 1000 * 1000;
  } else if (suffix == "m") {
    micros_per = 60LL * 1000 * 1000;
  } else if (suffix == "h") {
    micros_per = 3600LL * 1000 * 1000;
  } else if (suffix == "d") {
    micros_per = 86400LL * 1000 * 1000;
  } else {
    return bad();
  }
  if (number > std::numeric_limits<std::int64_t>::max() / micros_per) return bad();
  return std::chrono::microseconds(number * micros_per);
}

}  // namespace reckon::cli
