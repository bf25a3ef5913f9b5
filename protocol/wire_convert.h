// Conversions between the engine's value types and the wire messages of
// protocol/reckon.capnp that carry them: history events, workflow commands, tool task
// outcomes. Used by both ends (server and worker), so the two can never disagree.
//
// Readers come from a frame the peer sent: anything may be wrong in them. The From* functions
// return Errc::kInvalidArgument naming the field instead of trusting the peer.
#pragma once

#include <boost/json/value.hpp>

#include <span>
#include <string>
#include <vector>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/base/error.h"
#include "reckon/engine/command.h"
#include "reckon/engine/tool_dispatcher.h"
#include "reckon/storage/event.h"
#include "reckon/storage/event_codec.h"

namespace reckon::api {

kj::StringPtr Text(const std::string& s);
std::string Str(capnp::Text::Reader text);
// An enum value's name on the wire: `name` comes from the enum's name table (a string literal,
// so it outlives the message and is NUL-terminated).
kj::StringPtr Name(std::string_view name);

// JSON text from the wire; `field` names it in the error.
Result<boost::json::value> JsonFromWire(capnp::Text::Reader text, std::string_view field);

void EventsToWire(std::span<const storage::Event> events,
                  capnp::List<wire::HistoryEvent>::Builder out);
// The same with each event's payload already encoded (storage::EncodeEventBody), in order.
void EventsToWire(std::span<const storage::Event> events, std::span<const std::string> payloads,
                  capnp::List<wire::HistoryEvent>::Builder out);
Result<std::vector<storage::Event>> EventsFromWire(capnp::List<wire::HistoryEvent>::Reader in,
                                                   storage::EventDecoder& decoder);

void CommandsToWire(const std::vector<Command>& commands,
                    capnp::List<wire::Command>::Builder out);
Result<std::vector<Command>> CommandsFromWire(capnp::List<wire::Command>::Reader in);

void AttemptOutcomeToWire(const AttemptOutcome& outcome, wire::CompleteToolTask::Builder out);
Result<AttemptOutcome> AttemptOutcomeFromWire(wire::CompleteToolTask::Reader in);
void ReconcileOutcomeToWire(const ReconcileOutcome& outcome,
                            wire::CompleteToolTask::Builder out);
Result<ReconcileOutcome> ReconcileOutcomeFromWire(wire::CompleteToolTask::Reader in);

}  // namespace reckon::api
