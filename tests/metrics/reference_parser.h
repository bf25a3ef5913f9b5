// The Prometheus reference parser (Debian's python3-prometheus-client, run through
// tests/metrics/parse_metrics.py) for the metrics tests: a scrape's text in, what the parser
// made of it out. A text the parser refuses fails the calling test with the parser's message.
// Needs PARSE_METRICS_SCRIPT defined by the build.
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/subprocess.h"

namespace reckon::testing {

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

// What the reference parser made of a scrape.
struct ParsedMetrics {
  boost::json::object families;  // name -> type (the parser strips _total from counters)
  boost::json::array samples;    // [name, {labels}, value]

  // The value of the sample `name` whose labels include `labels`; -1 if none.
  double Value(const std::string& name, const boost::json::object& labels = {}) const {
    for (const boost::json::value& s : samples) {
      const boost::json::array& sample = s.as_array();
      if (sample[0].as_string() != name) continue;
      const boost::json::object& have = sample[1].as_object();
      bool match = true;
      for (const auto& [key, value] : labels) {
        const boost::json::value* got = have.if_contains(key);
        if (got == nullptr || *got != value) match = false;
      }
      if (match) return sample[2].to_number<double>();
    }
    return -1;
  }
};

// Parses `text` with the reference parser; `scratch` is a path prefix for its files.
inline ParsedMetrics ParseWithReferenceParser(const std::string& text, const std::string& scratch) {
  const std::string in = scratch + ".txt";
  const std::string out = scratch + ".json";
  std::ofstream(in) << text;
  SubprocessOptions options;
  options.args = {PARSE_METRICS_SCRIPT, in, out};
  options.stderr_path = scratch + ".err";
  auto parser = Subprocess::Start("/usr/bin/python3", options);
  EXPECT_TRUE(parser) << parser.error().ToString();
  if (!parser) return {};
  auto status = parser.value().WaitFor(std::chrono::seconds(60));
  EXPECT_TRUE(status && status.value().Succeeded())
      << "the reference parser refused the text (is python3-prometheus-client installed? "
         "cmake/debian-packages.txt):\n"
      << ReadWholeFile(scratch + ".err") << "\n--- text ---\n"
      << text;
  ParsedMetrics parsed;
  boost::system::error_code ec;
  boost::json::value root = boost::json::parse(ReadWholeFile(out), ec);
  if (ec) return parsed;
  parsed.families = root.at("families").as_object();
  parsed.samples = root.at("samples").as_array();
  return parsed;
}

}  // namespace reckon::testing
