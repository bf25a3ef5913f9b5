// StepId: a step id that workflow code chooses for a call (CallOptions::step_id), held inline
// rather than on the heap, so that CallOptions stays trivially copyable.
//
// Why: GCC 12 miscompiles an aggregate with a destructor that is brace-initialized inside a
// `co_await` expression: it copies the temporary bitwise into the parameter and destroys both
// copies, so a std::string member is freed twice (`co_await ctx.Call("t", in,
// CallOptions{.step_id = "hold"})` aborted). A trivially copyable CallOptions makes that copy
// harmless; the static_assert in workflow_context.h keeps it so.
//
// At most kMaxBytes bytes (agent plans allow 64 plus a short prefix). A longer id is kept as
// "too long" and WorkflowContext::Call fails that call with CallFailure "invalid_step_id"
// instead of truncating it into another step's id. Converts implicitly from strings, so
// `options.step_id = prefix + "-model"` reads as it would with a std::string. A value.
#pragma once

#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace reckon {

class StepId {
 public:
  static constexpr std::size_t kMaxBytes = 128;

  StepId() = default;
  StepId(std::string_view id) {  // NOLINT(google-explicit-constructor): reads as a string
    too_long_ = id.size() > kMaxBytes;
    size_ = too_long_ ? 0 : id.size();
    std::memcpy(bytes_.data(), id.data(), size_);
  }
  StepId(const char* id) : StepId(std::string_view(id)) {}          // NOLINT
  StepId(const std::string& id) : StepId(std::string_view(id)) {}  // NOLINT

  // Empty when none was chosen (the call is numbered "<tool>#<n>") or when it was too long.
  bool empty() const { return size_ == 0; }
  bool too_long() const { return too_long_; }
  std::string str() const { return std::string(bytes_.data(), size_); }

 private:
  std::array<char, kMaxBytes> bytes_{};
  std::size_t size_ = 0;
  bool too_long_ = false;
};

}  // namespace reckon
