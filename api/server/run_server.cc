#include "reckon/api/server/run_server.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "reckon/api/server/server_host.h"

namespace reckon::api {

int RunServer(const ServerConfig& config) {
  // Logs go to stderr; stdout stays free for what scripts read.
  if (!spdlog::get("reckon")) spdlog::set_default_logger(spdlog::stderr_color_mt("reckon"));
  auto host = ServerHost::Create(config);
  if (!host) {
    spdlog::error("{}", host.error().ToString());
    return 1;
  }
  return host.value()->Run();
}

}  // namespace reckon::api
