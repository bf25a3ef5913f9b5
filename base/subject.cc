#include "reckon/base/subject.h"

#include <string>

#include "reckon/base/identifier.h"

namespace reckon {

Result<void> ValidateSubject(std::string_view subject) {
  auto refuse = [&](std::string_view why) {
    return Err(Errc::kInvalidArgument,
               "subject " + QuoteForMessage(subject) + " is not valid: " + std::string(why) +
                   "; a subject is 1-256 bytes of printable ASCII without spaces, * or >, as "
                   "non-empty tokens separated by dots (orders.created)");
  };
  if (subject.empty()) return refuse("it is empty");
  if (subject.size() > kMaxSubjectBytes) return refuse("it is too long");
  char previous = '.';
  for (char c : subject) {
    if (c <= 0x20 || c >= 0x7f) return refuse("it has a space or a byte outside printable ASCII");
    if (c == '*' || c == '>') return refuse("wildcards are for subscribers");
    if (c == '.' && previous == '.') return refuse("it has an empty token");
    previous = c;
  }
  if (previous == '.') return refuse("it has an empty token");
  return Ok();
}

}  // namespace reckon
