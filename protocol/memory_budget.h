// MemoryBudget: a cap on the bytes a server buffers for all its connections together (read
// buffers, requests being handled, replies not yet written), so that no number of peers can make
// it hold more than `limit` bytes of their data. It only counts: whoever allocates charges it
// first and releases it after freeing.
//
// Two ways to charge. TryCharge is for memory not yet allocated (a read buffer about to grow):
// it refuses, charging nothing, when the bytes do not fit, and the caller must not allocate.
// Charge is for memory that exists already (a reply just encoded, a request just read): it
// always succeeds and may take used() over limit(); callers then stop adding (backpressure) until
// releases bring it back under. So used() exceeds limit() by at most what such callers hold.
//
// MemoryCharge is a charge held in a value: released when it is destroyed.
//
// Ownership and threads: owned by the Server; FrameStreams and in-flight requests hold a
// pointer to it and must not outlive it. Not thread-safe: everything runs on the server's one
// executor.
#pragma once

#include <cstddef>

namespace reckon::api {

class MemoryBudget {
 public:
  explicit MemoryBudget(std::size_t limit) : limit_(limit) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Charges `bytes` if used() + bytes <= limit(); false, charging nothing, otherwise.
  bool TryCharge(std::size_t bytes);
  // Charges `bytes` whatever the limit (the memory exists already).
  void Charge(std::size_t bytes) { used_ += bytes; }
  // Gives back bytes charged earlier; releasing more than was charged is a bug (asserted).
  void Release(std::size_t bytes);

  std::size_t used() const { return used_; }
  std::size_t limit() const { return limit_; }
  // True while the charges are at or over the limit: stop adding memory that Charge() counts.
  bool exhausted() const { return used_ >= limit_; }

 private:
  std::size_t limit_;
  std::size_t used_ = 0;
};

class MemoryCharge {
 public:
  MemoryCharge() = default;
  // Charges `bytes` to `budget` (Charge: always succeeds); `budget` may be null (nothing counted).
  MemoryCharge(MemoryBudget* budget, std::size_t bytes);
  MemoryCharge(MemoryCharge&& other) noexcept;
  MemoryCharge& operator=(MemoryCharge&& other) noexcept;
  ~MemoryCharge() { Reset(); }

  void Reset();
  std::size_t bytes() const { return bytes_; }

 private:
  MemoryBudget* budget_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace reckon::api
