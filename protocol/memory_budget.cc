#include "reckon/protocol/memory_budget.h"

#include <cassert>
#include <utility>

namespace reckon::api {

bool MemoryBudget::TryCharge(std::size_t bytes) {
  if (used_ > limit_ || bytes > limit_ - used_) return false;
  used_ += bytes;
  return true;
}

void MemoryBudget::Release(std::size_t bytes) {
  assert(bytes <= used_ && "MemoryBudget: released more than was charged");
  used_ -= bytes <= used_ ? bytes : used_;
}

MemoryCharge::MemoryCharge(MemoryBudget* budget, std::size_t bytes)
    : budget_(budget), bytes_(budget ? bytes : 0) {
  if (budget_) budget_->Charge(bytes_);
}

MemoryCharge::MemoryCharge(MemoryCharge&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

MemoryCharge& MemoryCharge::operator=(MemoryCharge&& other) noexcept {
  if (this != &other) {
    Reset();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MemoryCharge::Reset() {
  if (budget_) budget_->Release(bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

}  // namespace reckon::api
