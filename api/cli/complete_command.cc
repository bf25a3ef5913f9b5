#include "reckon/api/cli/complete_command.h"

#include <boost/json/parse.hpp>

#include <memory>
#include <string>

#include "reckon/api/cli/bind_command.h"
#include "reckon/api/cli/remote.h"
#include "reckon/protocol/failure_kind_wire.h"
#include "reckon/base/identifier.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;
namespace wire = api::wire;

struct CompleteArgs {
  RemoteFlags remote;
  std::string operation_id;
  std::string workflow_id;
  std::string delivery_id;
  bool succeeded = false;
  bool failed = false;
  std::string output = "null";
  std::string provider_ref;
  std::string kind = "definitive";
  std::string code;
  std::string message;
};

Result<void> RunComplete(CommandEnv& env, const CompleteArgs& args) {
  RECKON_TRY(ValidateId(IdKind::kOperationId, args.operation_id));
  if (!args.workflow_id.empty()) {
    RECKON_TRY(ValidateId(IdKind::kWorkflowId, args.workflow_id));
  }
  if (args.delivery_id.empty()) {
    return Err(Errc::kInvalidArgument,
               "--delivery-id is required: the sender's id of this delivery (the webhook's event "
               "id), the same on every redelivery, so that it is applied once");
  }
  RECKON_TRY(ValidateId(IdKind::kUpdateId, args.delivery_id));
  if (args.succeeded == args.failed) {
    return Err(Errc::kInvalidArgument, "give exactly one of --succeeded and --failed");
  }
  boost::system::error_code ec;
  (void)json::parse(args.output, ec);
  if (ec) return Err(Errc::kInvalidArgument, "--output is not valid JSON: " + ec.message());
  auto kind = api::ParseFailureKind(args.kind);
  if (!kind) return kind.error().WithContext("--kind");
  if (args.failed && args.code.empty()) {
    return Err(Errc::kInvalidArgument, "--failed needs --code: the provider's failure code, "
                                       "classified by the tool's contract");
  }
  auto request = NewRequest();
  auto c = request->getRoot<wire::Request>().initMethod().initCompleteOperation();
  c.setWorkflowId(args.workflow_id);
  c.setOperationId(args.operation_id);
  c.setDeliveryId(args.delivery_id);
  c.setSucceeded(args.succeeded);
  if (args.succeeded) c.setOutputJson(args.output);
  c.setProviderRef(args.provider_ref);
  c.setKind(api::FailureKindToWire(kind.value()));
  c.setCode(args.code);
  c.setMessage(args.message);
  RECKON_TRY(CallServer(args.remote, std::move(request)));
  return WriteOut(env, "delivered completion " + args.delivery_id + " of " + args.operation_id +
                        " (a repeat of a delivery changes nothing)\n");
}

}  // namespace

void AddCompleteCommand(CLI::App& app, CommandEnv& env) {
  auto args = std::make_shared<CompleteArgs>();
  CLI::App* c = app.add_subcommand(
      "complete", "Deliver a provider's completion of an operation that answered accepted");
  c->add_option("operation_id", args->operation_id, "Operation id")->required();
  c->add_option("--workflow", args->workflow_id, "The operation's run (optional)");
  c->add_option("--delivery-id", args->delivery_id,
                "The sender's id of this delivery, the same on every redelivery")
      ->required();
  c->add_flag("--succeeded", args->succeeded, "The provider reports success");
  c->add_flag("--failed", args->failed, "The provider reports failure");
  c->add_option("--output", args->output, "Result JSON (with --succeeded; default null)");
  c->add_option("--provider-ref", args->provider_ref, "The provider's reference");
  c->add_option("--kind", args->kind, "With --failed: definitive (default), retryable, unknown");
  c->add_option("--code", args->code, "With --failed: the provider's code");
  c->add_option("--message", args->message, "With --failed: the provider's words");
  AddRemoteFlags(c, args->remote);
  BindCommand(c, env, args, "complete", RunComplete);
}

}  // namespace reckon::cli
