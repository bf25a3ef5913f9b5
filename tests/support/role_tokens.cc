#include "tests/support/role_tokens.h"

#include <chrono>

#include "tests/support/subprocess.h"

namespace reckon::testing {

std::string RoleTokenFile(const std::string& dir, const std::string& role) {
  return dir + "/" + role + ".token";
}

Result<void> IssueRoleTokens(const std::string& reckon_path, const std::string& address,
                             const std::string& admin_token_file, const std::string& dir,
                             const std::vector<std::pair<std::string, std::string>>& env) {
  for (const char* role : kTestRoles) {
    SubprocessOptions options;
    options.args = {"auth",   "token",   "create", "--name",      role,
                    "--role", role,      "--out",  RoleTokenFile(dir, role), "--token-file",
                    admin_token_file, "--server", address};
    const std::string log = dir + "/auth-" + role + ".err";
    options.stderr_path = log;
    options.env = env;
    RECKON_TRY(Subprocess process, Subprocess::Start(reckon_path, std::move(options)));
    RECKON_TRY(ExitStatus status, process.WaitFor(std::chrono::seconds(30)));
    if (!status.Succeeded()) {
      return Err(Errc::kInternal, std::string("`reckon auth token create --role ") + role +
                                      "` " + status.ToString() + " (see " + log + ")");
    }
  }
  return Ok();
}

std::string RoleForCommand(const std::vector<std::string>& args) {
  if (args.empty()) return "reader";
  const std::string& command = args.front();
  if (command == "start" || command == "signal" || command == "cancel" || command == "update") {
    return "operator";
  }
  if (command == "plan" && args.size() > 1 && args[1] == "run") return "operator";
  if (command == "approve" || command == "deny" || command == "resolve") return "approver";
  if (command == "auth") return "admin";
  if (command == "complete") return "worker";  // a provider's completion: the tool's side
  return "reader";
}

}  // namespace reckon::testing
