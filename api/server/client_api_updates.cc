// ClientApi: queryWorkflow and updateWorkflow (ctx.OnQuery, ctx.OnUpdate). The engine does
// the work (engine/engine.h: Query, Update); this translates the wire. The update's sender
// journaled with UpdateAccepted is the calling principal.
#include <boost/asio/use_awaitable.hpp>

#include "reckon/protocol/wire_convert.h"
#include "reckon/api/server/client_api.h"
#include "reckon/api/server/request_fields.h"

namespace reckon::api {

namespace asio = boost::asio;

asio::awaitable<Result<void>> ClientApi::Query(wire::QueryWorkflow::Reader in,
                                               wire::Response::Builder out) {
  RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
  RECKON_CO_TRY(std::string name, RequiredText(in.getName(), "name"));
  std::string args = in.getArgsJson().size() == 0 ? "null" : Str(in.getArgsJson());
  auto answered = engine_.Query(std::move(id), std::move(name), std::move(args));
  RECKON_CO_TRY(std::string reply, co_await std::move(answered));
  out.initResult().setQueryResult(Text(reply));
  co_return Ok();
}

asio::awaitable<Result<void>> ClientApi::Update(const auth::Principal& caller,
                                                wire::UpdateWorkflow::Reader in,
                                                wire::Response::Builder out) {
  RECKON_CO_TRY(std::string id, RequiredText(in.getWorkflowId(), "workflowId"));
  RECKON_CO_TRY(std::string name, RequiredText(in.getName(), "name"));
  UpdateRequest request{Str(in.getUpdateId()), std::move(name),
                        in.getArgsJson().size() == 0 ? "null" : Str(in.getArgsJson()),
                        caller.name};
  auto updated = engine_.Update(std::move(id), std::move(request));
  RECKON_CO_TRY(UpdateOutcome answer, co_await std::move(updated));
  auto result = out.initResult().initUpdateResult();
  result.setUpdateId(Text(answer.update_id));
  result.setResultJson(Text(answer.result_json));
  result.setErrorCode(Text(answer.error_code));
  result.setErrorMessage(Text(answer.error_message));
  co_return Ok();
}

}  // namespace reckon::api
