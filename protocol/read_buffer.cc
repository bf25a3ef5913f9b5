#include "reckon/protocol/read_buffer.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace reckon::api {

Result<std::span<std::byte>> ReadBuffer::Room(std::size_t need) {
  need = std::max(need, size() + 1);  // there is always room for one more byte
  if (begin_ > 0 && (end_ == capacity_ || capacity_ - begin_ < need)) {
    // Move what is held to the front: the frame must end up in one piece.
    std::memmove(storage_.get(), storage_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == capacity_) {
    // Full: double (the first time, kFirstBytes), up to the frame, or kKeepBytes of read-ahead.
    const std::size_t grown = std::max(kFirstBytes, 2 * capacity_);
    const std::size_t cap = std::max(need, kKeepBytes);
    RECKON_TRY(Reallocate(std::min(grown, std::max(cap, capacity_ + 1))));
  }
  return std::span<std::byte>(storage_.get() + end_, capacity_ - end_);
}

void ReadBuffer::Consume(std::size_t n) {
  begin_ += std::min(n, size());
  if (begin_ == end_) begin_ = end_ = 0;
  if (capacity_ <= kKeepBytes || size() > capacity_ / 4) return;
  if (size() == 0) {
    Release();
    return;
  }
  // Shrinking allocates a smaller buffer; if even that does not fit, keep the larger one.
  (void)Reallocate(std::max(kKeepBytes, 2 * size()));
}

void ReadBuffer::Release() {
  storage_.reset();
  if (budget_) budget_->Release(capacity_);
  capacity_ = begin_ = end_ = 0;
}

Result<void> ReadBuffer::Reallocate(std::size_t capacity) {
  const std::size_t held = size();
  const std::size_t more = capacity > capacity_ ? capacity - capacity_ : 0;
  if (budget_ && more > 0 && !budget_->TryCharge(more)) {
    return Err(Errc::kResourceExhausted,
               "cannot buffer a frame: growing this connection's read buffer from " +
                   std::to_string(capacity_) + " to " + std::to_string(capacity) +
                   " bytes would exceed the memory budget of " +
                   std::to_string(budget_->limit()) + " bytes for all connections (" +
                   std::to_string(budget_->used()) + " in use)");
  }
  auto storage = std::make_unique_for_overwrite<std::byte[]>(capacity);
  if (held > 0) std::memcpy(storage.get(), storage_.get() + begin_, held);
  storage_ = std::move(storage);
  if (budget_ && capacity < capacity_) budget_->Release(capacity_ - capacity);
  capacity_ = capacity;
  begin_ = 0;
  end_ = held;
  return Ok();
}

}  // namespace reckon::api
