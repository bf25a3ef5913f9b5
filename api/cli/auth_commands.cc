#include "reckon/api/cli/auth_commands.h"

#include <boost/json.hpp>

#include <charconv>
#include <memory>

#include "reckon/api/cli/remote.h"
#include "reckon/protocol/credentials.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/base/private_file.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;
namespace wire = api::wire;
using api::Str;

struct CreateArgs {
  RemoteFlags remote;
  std::string name;
  std::string role;
  std::vector<std::string> tools;
  std::vector<std::string> workflow_types;
  std::string expires;
  std::string out;
};

json::array JsonTexts(capnp::List<capnp::Text>::Reader texts) {
  json::array out;
  for (auto text : texts) out.emplace_back(Str(text));
  return out;
}

std::string JoinTexts(capnp::List<capnp::Text>::Reader texts) {
  std::string out;
  for (auto text : texts) out += (out.empty() ? "" : ",") + Str(text);
  return out;
}

json::object PrincipalJson(wire::PrincipalInfo::Reader p) {
  return json::object{{"name", Str(p.getName())},
                      {"role", Str(p.getRole())},
                      {"tools", JsonTexts(p.getTools())},
                      {"workflow_types", JsonTexts(p.getWorkflowTypes())},
                      {"created_at_us", p.getCreatedAtUs()},
                      {"created_by", Str(p.getCreatedBy())},
                      {"expires_at_us", p.getExpiresAtUs()},
                      {"revoked_at_us", p.getRevokedAtUs()},
                      {"revoked_by", Str(p.getRevokedBy())}};
}

std::string ScopesText(wire::PrincipalInfo::Reader p) {
  std::string out;
  if (p.getTools().size() > 0) out += "tools=" + JoinTexts(p.getTools());
  if (p.getWorkflowTypes().size() > 0) {
    out += (out.empty() ? "" : " ") + std::string("workflows=") + JoinTexts(p.getWorkflowTypes());
  }
  return out.empty() ? "-" : out;
}

Result<void> Write(CommandEnv& env, const std::string& text) { return WriteOut(env, text); }

Result<void> RunCreate(CommandEnv& env, const CreateArgs& args) {
  std::chrono::seconds expires{0};
  if (!args.expires.empty()) {
    RECKON_TRY(expires, ParseDuration(args.expires));
  }
  auto request = NewRequest();
  auto create = request->getRoot<wire::Request>().initMethod().initCreateToken();
  create.setName(args.name);
  create.setRole(args.role);
  auto tools = create.initTools(args.tools.size());
  for (unsigned i = 0; i < args.tools.size(); ++i) tools.set(i, args.tools[i]);
  auto types = create.initWorkflowTypes(args.workflow_types.size());
  for (unsigned i = 0; i < args.workflow_types.size(); ++i) types.set(i, args.workflow_types[i]);
  create.setExpiresInS(static_cast<std::uint64_t>(expires.count()));
  // Before the server issues a token that could then not be kept.
  if (!args.out.empty()) {
    RECKON_TRY(CheckPrivateFileTarget(args.out, "token file"));
  }
  RECKON_TRY(api::Reply reply, CallServer(args.remote, std::move(request)));
  auto created = reply.get().getResult().getCreatedToken();
  const std::string token = Str(created.getToken());
  if (!args.out.empty()) {
    RECKON_TRY(api::WriteTokenFile(args.out, token));
    return Write(env, "wrote the token of '" + Str(created.getPrincipal().getName()) + "' (role " +
                          Str(created.getPrincipal().getRole()) + ") to " + args.out +
                          " (mode 0600); it is not shown again\n");
  }
  if (args.remote.json) {
    return Write(env, json::serialize(json::object{{"principal", PrincipalJson(created.getPrincipal())},
                                                   {"token", token}}) + "\n");
  }
  return Write(env, token + "\n");
}

Result<void> RunList(CommandEnv& env, const RemoteFlags& remote) {
  auto request = NewRequest();
  request->getRoot<wire::Request>().initMethod().setListTokens();
  RECKON_TRY(api::Reply reply, CallServer(remote, std::move(request)));
  auto tokens = reply.get().getResult().getTokens();
  if (remote.json) {
    json::array out;
    for (auto p : tokens) out.push_back(PrincipalJson(p));
    return Write(env, json::serialize(out) + "\n");
  }
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "ROLE", "SCOPES", "CREATED", "BY", "EXPIRES", "REVOKED"}};
  for (auto p : tokens) {
    rows.push_back({Str(p.getName()), Str(p.getRole()), ScopesText(p),
                    FormatTimeUs(p.getCreatedAtUs()), Str(p.getCreatedBy()),
                    FormatTimeUs(p.getExpiresAtUs()),
                    p.getRevokedAtUs() == 0 ? "-"
                                            : FormatTimeUs(p.getRevokedAtUs()) + " by " +
                                                  Str(p.getRevokedBy())});
  }
  return Write(env, RenderTable(rows) + std::to_string(tokens.size()) + " principal(s)\n");
}

Result<void> RunRevoke(CommandEnv& env, const RemoteFlags& remote, const std::string& name) {
  auto request = NewRequest();
  request->getRoot<wire::Request>().initMethod().initRevokeToken().setName(name);
  RECKON_TRY(api::Reply reply, CallServer(remote, std::move(request)));
  auto p = reply.get().getResult().getPrincipal();
  if (remote.json) return Write(env, json::serialize(PrincipalJson(p)) + "\n");
  return Write(env, "revoked the token of '" + Str(p.getName()) + "' (role " + Str(p.getRole()) +
                        ")\n");
}

Result<void> RunWhoAmI(CommandEnv& env, const RemoteFlags& remote) {
  auto request = NewRequest();
  request->getRoot<wire::Request>().initMethod().setWhoAmI();
  RECKON_TRY(api::Reply reply, CallServer(remote, std::move(request)));
  auto p = reply.get().getResult().getPrincipal();
  if (remote.json) return Write(env, json::serialize(PrincipalJson(p)) + "\n");
  return Write(env, Str(p.getName()) + " (role " + Str(p.getRole()) + ", scopes " + ScopesText(p) +
                        ", expires " + FormatTimeUs(p.getExpiresAtUs()) + ")\n");
}

template <typename Run>
void Report(CommandEnv& env, std::string_view command, Run run) {
  if (Result<void> result = run(); !result) ReportError(env, command, result.error());
}

}  // namespace

Result<std::chrono::seconds> ParseDuration(std::string_view text) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view unit(end, text.data() + text.size() - end);
  long long scale = 0;
  if (unit == "s") scale = 1;
  if (unit == "m") scale = 60;
  if (unit == "h") scale = 3600;
  if (unit == "d") scale = 86400;
  if (ec != std::errc() || end == text.data() || scale == 0 || value <= 0 ||
      value > 3650LL * 86400 / scale) {
    return Err(Errc::kInvalidArgument, "'" + std::string(text) +
                                           "' is not a duration: write a positive number and "
                                           "s, m, h or d (30d, 12h), at most 10 years");
  }
  return std::chrono::seconds(value * scale);
}

void AddAuthCommands(CLI::App& app, CommandEnv& env) {
  CLI::App* auth = app.add_subcommand("auth", "Principals and their API tokens (admin)");
  auth->require_subcommand(1);
  CLI::App* token = auth->add_subcommand("token", "Create, list and revoke API tokens");
  token->require_subcommand(1);
  {
    auto args = std::make_shared<CreateArgs>();
    CLI::App* c = token->add_subcommand("create", "Create a principal; prints its token once");
    c->add_option("--name", args->name, "The principal's name")->required();
    c->add_option("--role", args->role,
                  "admin | operator | approver | reader | worker; several: operator,approver")
        ->required();
    c->add_option("--tools", args->tools, "approver, worker: only these tools")->delimiter(',');
    c->add_option("--workflow-types", args->workflow_types,
                  "worker: only these workflow types")->delimiter(',');
    c->add_option("--expires", args->expires, "Lifetime: 30d, 12h, 15m, 90s (default: none)");
    c->add_option("--out", args->out, "Write the token to this file (mode 0600) instead")
        ->type_name("FILE");
    AddRemoteFlags(c, args->remote);
    c->callback([&env, args] { Report(env, "auth token create", [&] { return RunCreate(env, *args); }); });
  }
  {
    auto remote = std::make_shared<RemoteFlags>();
    CLI::App* c = token->add_subcommand("list", "List principals (never their tokens)");
    AddRemoteFlags(c, *remote);
    c->callback([&env, remote] { Report(env, "auth token list", [&] { return RunList(env, *remote); }); });
  }
  {
    auto remote = std::make_shared<RemoteFlags>();
    auto name = std::make_shared<std::string>();
    CLI::App* c = token->add_subcommand("revoke", "Revoke a principal's token");
    c->add_option("name", *name, "The principal's name")->required();
    AddRemoteFlags(c, *remote);
    c->callback([&env, remote, name] {
      Report(env, "auth token revoke", [&] { return RunRevoke(env, *remote, *name); });
    });
  }
  {
    auto remote = std::make_shared<RemoteFlags>();
    CLI::App* c = auth->add_subcommand("whoami", "The principal your token stands for");
    AddRemoteFlags(c, *remote);
    c->callback([&env, remote] { Report(env, "auth whoami", [&] { return RunWhoAmI(env, *remote); }); });
  }
}

}  // namespace reckon::cli
