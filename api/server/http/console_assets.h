// The web console's files (api/server/http/console/), compiled into the binary by
// cmake/embed_assets.cmake, so the server needs nothing on disk and fetches nothing at run time.
#pragma once

#include <span>
#include <string_view>

namespace reckon::api {

struct ConsoleAsset {
  std::string_view name;          // "index.html", "app.js", "app.css"
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view body;
};

std::span<const ConsoleAsset> ConsoleAssets();

// The asset named `name`, or nullptr.
const ConsoleAsset* FindConsoleAsset(std::string_view name);

}  // namespace reckon::api
