#include "tests/support/file_damage.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace reckon::testing {

Result<std::uint64_t> FlipMiddle(const std::string& path, std::uint64_t length) {
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return Err(Errc::kUnavailable, "cannot stat '" + path + "': " + ec.message());
  if (size < 3 * length) {
    return Err(Errc::kFailedPrecondition, "'" + path + "' has " + std::to_string(size) +
                                              " bytes, too few to damage its middle");
  }
  const std::uint64_t offset = (size / 2) / 4096 * 4096;
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  std::vector<char> bytes(length);
  file.seekg(static_cast<std::streamoff>(offset));
  file.read(bytes.data(), static_cast<std::streamsize>(length));
  for (char& byte : bytes) byte = static_cast<char>(~byte);
  file.seekp(static_cast<std::streamoff>(offset));
  file.write(bytes.data(), static_cast<std::streamsize>(length));
  file.flush();
  if (!file) return Err(Errc::kUnavailable, "cannot rewrite the middle of '" + path + "'");
  return offset;
}

Result<std::uint64_t> FlipByteInside(const std::string& path, std::string_view needle,
                                     std::uint64_t from, std::uint64_t to) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Err(Errc::kUnavailable, "cannot read '" + path + "'");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = bytes.find(needle, from);
  if (at == std::string::npos || at + needle.size() > to) {
    return Err(Errc::kNotFound, "'" + path + "' does not hold '" + std::string(needle) +
                                    "' between offsets " + std::to_string(from) + " and " +
                                    std::to_string(to));
  }
  const std::uint64_t offset = at + needle.size() / 2;
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(offset));
  const char flipped = static_cast<char>(bytes[offset] ^ 0x01);
  file.write(&flipped, 1);
  file.flush();
  if (!file) return Err(Errc::kUnavailable, "cannot rewrite a byte of '" + path + "'");
  return offset;
}

}  // namespace reckon::testing
