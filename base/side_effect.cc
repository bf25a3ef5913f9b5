#include "reckon/base/side_effect.h"

#include <array>

#include "reckon/base/enum_names.h"

namespace reckon {
namespace {

constexpr std::array<std::string_view, 4> kNames = {"read_only", "idempotent_write",
                                                    "deduplicated_write", "non_repeatable_write"};

}  // namespace

std::string_view SideEffectName(SideEffect side_effect) { return EnumName(kNames, side_effect); }

Result<SideEffect> ParseSideEffect(std::string_view name) {
  return ParseEnum<SideEffect>(kNames, "side effect", name);
}

bool IsWrite(SideEffect side_effect) { return side_effect != SideEffect::kReadOnly; }

}  // namespace reckon
