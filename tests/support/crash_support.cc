#include "tests/support/crash_support.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace reckon::testing {
namespace fs = std::filesystem;

std::uint64_t EnvNumber(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::strtoull(value, nullptr, 10) : fallback;
}

Result<ListeningProcess> StartListening(const std::string& path, SubprocessOptions options,
                                        std::chrono::milliseconds timeout) {
  RECKON_TRY(Subprocess process, Subprocess::Start(path, std::move(options)));
  RECKON_TRY(std::string line, process.ReadLine(timeout));
  const std::string prefix = "listening on 127.0.0.1:";
  if (line.rfind(prefix, 0) != 0) return Err(Errc::kInternal, path + " printed '" + line + "'");
  const auto port = static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
  return ListeningProcess{std::move(process), port};
}

std::string Tail(const fs::path& path, std::size_t max_chars) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  return all.size() > max_chars ? "..." + all.substr(all.size() - max_chars) : all;
}

std::string KeepEvidence(const fs::path& dir, const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  fs::path kept = fs::path(tmp && *tmp ? tmp : "/tmp") / name;
  std::error_code ec;
  fs::remove_all(kept, ec);
  fs::create_directories(kept, ec);
  fs::copy(dir, kept, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  return ec ? "(could not keep the files: " + ec.message() + ")" : kept.string();
}

}  // namespace reckon::testing
