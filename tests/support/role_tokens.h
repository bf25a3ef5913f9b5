// Role tokens for tests of server mode: on a running `reckon server` whose first start wrote
// the admin token, creates one principal per role (operator, approver, reader, worker), each
// named after its role, with its token in <dir>/<role>.token (mode 0600), through the real
// CLI (`reckon auth token create --out`).
//
// RoleForCommand says which of them a CLI subcommand needs: start, signal, cancel and
// `plan run` the operator; approve, deny and resolve the approver; auth the admin; complete
// the worker; the rest
// (list, show, history, trace, contracts, watch) the reader.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::testing {

inline constexpr const char* kTestRoles[] = {"operator", "approver", "reader", "worker"};

// `admin_token_file`: what the server wrote (default <journal>.admin-token).
// `env`: added to the CLI's environment (e.g. $RECKON_CA for a server with TLS).
Result<void> IssueRoleTokens(const std::string& reckon_path, const std::string& address,
                             const std::string& admin_token_file, const std::string& dir,
                             const std::vector<std::pair<std::string, std::string>>& env = {});

// <dir>/<role>.token.
std::string RoleTokenFile(const std::string& dir, const std::string& role);

std::string RoleForCommand(const std::vector<std::string>& args);

}  // namespace reckon::testing
