#include "reckon/api/cli/decision_commands.h"

#include <memory>

#include "reckon/api/cli/remote.h"

namespace reckon::cli {
namespace {

namespace wire = api::wire;

struct DecisionArgs {
  RemoteFlags remote;
  std::string workflow_id;
  std::string operation_id;
  std::string approval_id;
  std::string intent_hash;
  std::string note;
  std::string reason;
};

Result<void> Decide(CommandEnv& env, const DecisionArgs& args, bool granted) {
  if (args.operation_id.empty() && args.approval_id.empty()) {
    return Err(Errc::kInvalidArgument,
               "name the operation with --operation (see `reckon show " + args.workflow_id + "`)");
  }
  if (args.intent_hash.empty()) {
    return Err(Errc::kInvalidArgument,
               "pass --fingerprint HASH, the intent hash you reviewed (`reckon show " +
                   args.workflow_id + "` prints it): a decision is bound to the intent it saw");
  }
  auto request = NewRequest();
  auto d = request->getRoot<wire::Request>().initMethod().initDecideApproval();
  d.setWorkflowId(args.workflow_id);
  d.setOperationId(args.operation_id);
  d.setApprovalId(args.approval_id);
  d.setExpectedIntentHash(args.intent_hash);
  d.setGranted(granted);
  d.setDecidedBy(args.note);  // the principal is the server's to record; this is a note
  d.setReason(args.reason);
  RECKON_TRY(CallServer(args.remote, std::move(request)));
  const std::string what = args.operation_id.empty() ? args.approval_id : args.operation_id;
  if (!(env.out << (granted ? "approved " : "denied ") << what << " of " << args.workflow_id
                << "\n")
           .flush()) {
    return Err(Errc::kUnavailable, "cannot write to standard output");
  }
  return Ok();
}

struct ResolveArgs {
  RemoteFlags remote;
  std::string workflow_id;
  std::string operation_id;
  bool committed = false;
  bool not_committed = false;
  std::string provider_ref;
  std::string note;
};

Result<void> Resolve(CommandEnv& env, const ResolveArgs& args) {
  if (args.committed == args.not_committed) {
    return Err(Errc::kInvalidArgument,
               "say what you found: --committed --provider-ref REF, or --not-committed");
  }
  if (args.committed && args.provider_ref.empty()) {
    return Err(Errc::kInvalidArgument,
               "--committed needs --provider-ref: the provider's id for the effect you found");
  }
  auto request = NewRequest();
  auto r = request->getRoot<wire::Request>().initMethod().initResolveOperation();
  r.setWorkflowId(args.workflow_id);
  r.setOperationId(args.operation_id);
  r.setCommitted(args.committed);
  r.setProviderRef(args.provider_ref);
  r.setNote(args.note);
  RECKON_TRY(CallServer(args.remote, std::move(request)));
  if (!(env.out << "resolved " << args.operation_id << " of " << args.workflow_id << " as "
                << (args.committed ? "committed" : "not committed") << "\n")
           .flush()) {
    return Err(Errc::kUnavailable, "cannot write to standard output");
  }
  return Ok();
}

void AddDecision(CLI::App& app, CommandEnv& env, const char* name, const char* help,
                 bool granted) {
  auto args = std::make_shared<DecisionArgs>();
  CLI::App* c = app.add_subcommand(name, help);
  c->add_option("workflow_id", args->workflow_id, "Workflow id")->required();
  c->add_option("--operation", args->operation_id, "Operation id (from `reckon show`)");
  c->add_option("--approval", args->approval_id, "Approval id, instead of --operation");
  c->add_option("--fingerprint,--intent-hash", args->intent_hash,
                "Required: the intent hash you reviewed; refused if the operation's intent differs");
  c->add_option("--note", args->note,
                "Free text journaled beside you (the principal of your token decides)");
  c->add_option("--reason", args->reason, "Why; recorded in the journal");
  AddRemoteFlags(c, args->remote);
  c->callback([&env, args, name, granted] {
    if (Result<void> result = Decide(env, *args, granted); !result) {
      ReportError(env, name, result.error());
    }
  });
}

}  // namespace

void AddDecisionCommands(CLI::App& app, CommandEnv& env) {
  AddDecision(app, env, "approve", "Approve an operation waiting for approval", true);
  AddDecision(app, env, "deny", "Deny an operation waiting for approval (it is rejected)", false);
  auto args = std::make_shared<ResolveArgs>();
  CLI::App* c = app.add_subcommand("resolve", "Settle an operation that needs a person");
  c->add_option("workflow_id", args->workflow_id, "Workflow id")->required();
  c->add_option("--operation", args->operation_id, "Operation id (from `reckon show`)")
      ->required();
  c->add_flag("--committed", args->committed, "The effect happened (give --provider-ref)");
  c->add_flag("--not-committed", args->not_committed, "The effect did not happen");
  c->add_option("--provider-ref", args->provider_ref, "The provider's id for the effect");
  c->add_option("--note", args->note, "What you checked; recorded in the journal");
  AddRemoteFlags(c, args->remote);
  c->callback([&env, args] {
    if (Result<void> result = Resolve(env, *args); !result) {
      ReportError(env, "resolve", result.error());
    }
  });
}

}  // namespace reckon::cli
