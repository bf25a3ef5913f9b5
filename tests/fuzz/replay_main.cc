// The default tier's stand-in for libFuzzer: runs a fuzz target (LLVMFuzzerTestOneInput) once
// over every file of the corpus directories named on the command line, in name order, so that
// every seed and every regression input stays covered by the normal gcc build. A crash, a
// sanitizer report or a broken FUZZ_CHECK fails the test; so does an empty corpus (a wrong
// path would otherwise pass having checked nothing).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(argv[i], ec)) {
      if (entry.is_regular_file()) inputs.push_back(entry.path());
    }
    if (ec) {
      std::fprintf(stderr, "cannot list corpus directory %s: %s\n", argv[i], ec.message().c_str());
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "no corpus files: pass the corpus directories (tests/fuzz/corpus/<target>)\n");
    return 2;
  }
  for (const fs::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "%s (%zu bytes)\n", path.filename().c_str(), bytes.size());
    // A fresh copy of exactly the input's size, so a read past its end is a sanitizer report
    // in the sanitized build, as under libFuzzer.
    std::vector<std::uint8_t> copy(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(copy.data(), copy.size());
  }
  std::printf("replayed %zu inputs\n", inputs.size());
  return 0;
}
