// Message subjects: where a workflow (WorkflowContext::Publish) or an agent plan (a publish
// step) sends a message through the transactional outbox. The rule is NATS's for a subject one
// may publish to, checked where a subject enters (a plan, workflow code) so a bad one is
// refused before anything is journaled, never found by the dispatcher later. Stateless and
// thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon {

inline constexpr std::size_t kMaxSubjectBytes = 256;

// Success if `subject` is 1-256 bytes of printable ASCII without spaces or the wildcards * and
// >, as non-empty tokens separated by single dots ("orders.created"). Otherwise
// Errc::kInvalidArgument quoting the subject (escaped, cut) and stating the rule.
Result<void> ValidateSubject(std::string_view subject);

}  // namespace reckon
