// Fuzz target: RFC 8785 canonicalization (base/jcs.h). Besides not crashing: canonical text is
// a fixed point (canonicalizing it again gives the same bytes), the strict parser accepts
// exactly what the canonicalizer accepts, and canonicalizing the parsed value gives the same
// bytes whenever it is accepted (it may refuse an integer beyond 2^53 that the text form
// rounds).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "reckon/base/jcs.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto canonical = reckon::CanonicalizeJson(text);
  auto parsed = reckon::ParseStrictJson(text);
  FUZZ_CHECK(canonical.has_value() == parsed.has_value(),
             "CanonicalizeJson and ParseStrictJson disagree on whether the text is valid");
  if (!canonical) return 0;
  auto again = reckon::CanonicalizeJson(canonical.value());
  FUZZ_CHECK(again.has_value(), "the canonical form does not canonicalize");
  FUZZ_CHECK(again.value() == canonical.value(), "canonicalizing the canonical form changed it");
  auto from_value = reckon::CanonicalizeJson(parsed.value());
  if (from_value) {
    FUZZ_CHECK(from_value.value() == canonical.value(),
               "the parsed value canonicalizes differently from the text");
  }
  return 0;
}
