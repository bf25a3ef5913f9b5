#include "bench/fsync_floor.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace reckon::bench {

FsyncFloor MeasureFsyncFloor(const std::string& dir, int iterations) {
  const std::string path = dir + "/fsync-floor.tmp";
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  std::vector<char> page(4096, 'r');
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    // Append, like a WAL does, so each sync has new data to persist.
    if (::write(fd, page.data(), page.size()) != static_cast<ssize_t>(page.size()) ||
        ::fdatasync(fd) != 0) {
      ::close(fd);
      throw std::runtime_error("write/fdatasync failed on " + path);
    }
    samples.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  }
  ::close(fd);
  ::unlink(path.c_str());
  std::sort(samples.begin(), samples.end());
  FsyncFloor floor;
  double total = 0;
  for (double s : samples) total += s;
  floor.mean_us = total / samples.size();
  floor.p50_us = samples[samples.size() / 2];
  floor.p99_us = samples[std::min(samples.size() - 1, samples.size() * 99 / 100)];
  floor.ops_per_s = 1e6 / floor.mean_us;
  return floor;
}

}  // namespace reckon::bench
