#include "reckon/api/cli/command.h"

#include <istream>
#include <ostream>
#include <sstream>

namespace reckon::cli {

Result<std::string> ReadAll(std::istream& in) {
  std::ostringstream buffer;
  buffer << in.rdbuf();  // sets failbit on `buffer` for empty input, which is fine
  if (in.bad()) return Err(Errc::kFailedPrecondition, "cannot read standard input");
  return std::move(buffer).str();
}

Result<void> WriteOut(CommandEnv& env, std::string_view text) {
  if (!env.out.write(text.data(), static_cast<std::streamsize>(text.size())).flush()) {
    return Err(Errc::kUnavailable, "cannot write to standard output");
  }
  return Ok();
}

void ReportError(CommandEnv& env, std::string_view command, const Error& error) {
  const bool bad_input = error.action() == ErrorAction::kDoNotRetry;
  env.err << "reckon " << command << ": " << (bad_input ? error.message() : error.ToString())
          << "\n";
  env.exit_code = bad_input ? kExitBadInput : kExitFailure;
}

}  // namespace reckon::cli
