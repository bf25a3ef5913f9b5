// ReadBuffer: the bytes a FrameStream has received and not yet returned as frames, in memory
// committed only as bytes arrive.
//
// A frame's header may announce up to FrameLimits::max_message_bytes (8 MiB), and a peer can
// announce that and send nothing more. So the buffer never sizes itself by what is announced:
// it starts at kFirstBytes, and grows only when it is full, to at most twice what it holds
// (and never past the frame being read, or kKeepBytes while frames are small). The memory held
// is therefore at most max(kKeepBytes, 2 x bytes received). After a frame is consumed, a
// buffer larger than kKeepBytes that is under a quarter full is given back: freed when empty,
// else cut to twice what it holds.
//
// Every byte of capacity is charged to the MemoryBudget (protocol/memory_budget.h), if one
// is given, before it is allocated; growth the budget cannot cover fails with
// Errc::kResourceExhausted and allocates nothing.
//
// Ownership and threads: owned by its FrameStream; the budget, if any, must outlive it. Not
// thread-safe. Spans returned stay valid until the next call that is not const.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "reckon/protocol/memory_budget.h"
#include "reckon/base/error.h"

namespace reckon::api {

class ReadBuffer {
 public:
  static constexpr std::size_t kFirstBytes = 4 * 1024;
  static constexpr std::size_t kKeepBytes = 64 * 1024;

  // `budget` may be null: nothing is counted (the client side).
  explicit ReadBuffer(MemoryBudget* budget) : budget_(budget) {}
  ~ReadBuffer() { Release(); }
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;

  // The bytes held, oldest first.
  std::span<const std::byte> data() const { return {storage_.get() + begin_, end_ - begin_}; }
  std::size_t size() const { return end_ - begin_; }
  std::size_t capacity() const { return capacity_; }

  // Where to receive the next bytes, when size() < `need` (the bytes the frame being read needs
  // held at once). Never empty. Moves what is held to the front or grows as described above.
  // Errc::kResourceExhausted when the growth does not fit in the budget (nothing changed).
  Result<std::span<std::byte>> Room(std::size_t need);
  // `n` bytes were written at the start of the last Room().
  void Received(std::size_t n) { end_ += n; }
  // Drops `n` held bytes from the front, then gives back a large buffer that is mostly empty.
  void Consume(std::size_t n);
  // Frees everything and returns its charge.
  void Release();

 private:
  // Replaces the storage with `capacity` bytes holding what is held now.
  Result<void> Reallocate(std::size_t capacity);

  MemoryBudget* budget_;
  std::unique_ptr<std::byte[]> storage_;
  std::size_t capacity_ = 0;  // charged to budget_
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace reckon::api
