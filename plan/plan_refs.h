// Pieces of the plan format that its parser (plan.cc), validator (plan_validate.cc) and
// run-time helpers (plan_run.cc) share: step ids, references and the one message that lists a
// plan's problems. For plan/*.cc only; everything else uses plan.h. Stateless, thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/plan/plan.h"

namespace reckon::plan_detail {

using Problems = std::vector<std::string>;

inline constexpr std::size_t kMaxSteps = 1000;

// Step ids: 1-64 of [A-Za-z0-9_-] (no dot: references use dots).
bool ValidStepId(std::string_view id);
// Plan ids (they become workflow ids): 1-128 of [A-Za-z0-9_.-], starting with a letter or digit.
bool ValidPlanId(std::string_view id);

std::string Quote(std::string_view s);
std::string Join(const std::vector<std::string>& items, std::string_view separator);

// "steps.lookup.output.amount_cents" -> {lookup, [amount_cents]}; nullopt with *why set when
// the text is not a reference.
std::optional<PlanRef> ParseRefText(const std::string& text, std::string* why);
// An object with a "$ref" member.
bool IsRefObject(const boost::json::value& v);
// Walks `value` (a step input or payload), checking every {"$ref"} object and collecting
// (field path, ref); problems are prefixed with `where` and the path.
void CollectRefs(const boost::json::value& value, const std::string& path,
                 std::vector<std::pair<std::string, PlanRef>>& refs, Problems& problems,
                 const std::string& where);

// kInvalidArgument listing every problem of the plan `plan_id`.
Error Invalid(const std::string& plan_id, const Problems& problems);

}  // namespace reckon::plan_detail
