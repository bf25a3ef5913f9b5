// Ages on the command line: "30d", "12h", "15m", "90s", "500ms" (one number and one unit).
// Used by `reckon admin archive --older-than` and `reckon server --retention`.
#pragma once

#include <chrono>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::cli {

// kInvalidArgument naming `flag` and the accepted forms for anything else (a negative or zero
// age, a missing or unknown unit, an overflow).
Result<std::chrono::microseconds> ParseAge(std::string_view text, std::string_view flag);

}  // namespace reckon::cli
