#include "reckon/base/jcs.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

namespace reckon {
namespace {

const std::filesystem::path kTestData = RECKON_JCS_TESTDATA;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Canonical(std::string_view text) {
  Result<std::string> result = CanonicalizeJson(text);
  if (!result) return "ERROR: " + result.error().ToString();
  return result.value();
}

// ---- RFC 8785 vectors ------------------------------------------------------------------------

TEST(JcsVectors, EveryInputCanonicalizesToItsOutput) {
  const std::filesystem::path inputs = kTestData / "input";
  ASSERT_TRUE(std::filesystem::is_directory(inputs))
      << "JCS test vectors not found: looked for directory " << inputs
      << " (RECKON_JCS_TESTDATA=" << RECKON_JCS_TESTDATA << ")";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(inputs)) {
    const std::filesystem::path expected_path = kTestData / "output" / entry.path().filename();
    ASSERT_TRUE(std::filesystem::exists(expected_path)) << "no expected output " << expected_path;
    EXPECT_EQ(Canonical(ReadFile(entry.path())), ReadFile(expected_path)) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 6) << "expected the six official vectors in " << inputs;
}

TEST(JcsVectors, AllOfNumbersTxtFormatsAndParsesExactly) {
  const std::filesystem::path path = kTestData / "numbers.txt";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "JCS number vectors not found: looked for " << path;
  std::string line;
  int line_number = 0;
  int mismatches = 0;
  std::ostringstream first_mismatches;
  while (std::getline(in, line)) {
    ++line_number;
    const std::size_t comma = line.find(',');
    ASSERT_EQ(comma, 16u) << "line " << line_number << " is not HEX,TEXT: " << line;
    const auto bits = std::stoull(line.substr(0, comma), nullptr, 16);
    const auto value = std::bit_cast<double>(static_cast<std::uint64_t>(bits));
    const std::string expected = line.substr(comma + 1);
    const std::string formatted = FormatEcmaScriptNumber(value);
    // The parser must round the expected text back to the same double (or to a zero).
    const std::string reparsed = Canonical(expected);
    if (formatted != expected || reparsed != expected) {
      if (++mismatches <= 10) {
        first_mismatches << "  line " << line_number << ": " << line << " formatted as "
                         << formatted << ", text canonicalized as " << reparsed << "\n";
      }
    }
  }
  EXPECT_EQ(line_number, 100000) << "numbers.txt should have 100,000 lines";
  EXPECT_EQ(mismatches, 0) << "first mismatches:\n" << first_mismatches.str();
}

// ---- Output rules ----------------------------------------------------------------------------

TEST(Jcs, SortsMembersByUtf16CodeUnitsNotUtf8Bytes) {
  // U+1F600 is D83D DE00 in UTF-16, so it sorts before U+E000 (in UTF-8 it would sort after).
  EXPECT_EQ(Canonical(R"({"\ue000":1,"\ud83d\ude00":2,"a":3,"":4})"),
            "{\"\":4,\"a\":3,\"\xF0\x9F\x98\x80\":2,\"\xEE\x80\x80\":1}");
  EXPECT_EQ(Canonical(R"({"b":{"d":1,"c":2},"a":[{"z":0,"y":0}]})"),
            R"({"a":[{"y":0,"z":0}],"b":{"c":2,"d":1}})");
}

TEST(Jcs, EscapesStringsMinimally) {
  EXPECT_EQ(Canonical(R"("\b\t\n\f\r\"\\\/\u0000\u001F\u007f\u00e9\u2028")"),
            "\"\\b\\t\\n\\f\\r\\\"\\\\/\\u0000\\u001f\x7f\xC3\xA9\xE2\x80\xA8\"");
  EXPECT_EQ(Canonical("\"\xF0\x9F\x98\x80 raw\""), "\"\xF0\x9F\x98\x80 raw\"");
}

TEST(Jcs, RemovesWhitespaceAndKeepsLiterals) {
  EXPECT_EQ(Canonical(" \t\r\n[ true , false,null , { } , [ ] ] \n"), "[true,false,null,{},[]]");
}

TEST(Jcs, WritesNumbersTheEcmaScriptWay) {
  EXPECT_EQ(Canonical("[1.0, -0, -0.0, 0e10, 1E2, 1e21, 1e20, 1.5e-7, 0.000001, 1e-7, 123e-20]"),
            "[1,0,0,0,100,1e+21,100000000000000000000,1.5e-7,0.000001,1e-7,1.23e-18]");
  EXPECT_EQ(Canonical("[9007199254740993, 1e-400, -1e-400, 4.9e-324]"),
            "[9007199254740992,0,0,5e-324]");
  EXPECT_EQ(Canonical("0.1000000000000000055511151231257827021181583404541015625000001"), "0.1");
  EXPECT_EQ(FormatEcmaScriptNumber(-1.5), "-1.5");
  EXPECT_EQ(FormatEcmaScriptNumber(-0.0), "0");
  EXPECT_EQ(FormatEcmaScriptNumber(-1e-7), "-1e-7");
  EXPECT_EQ(FormatEcmaScriptNumber(123456.789), "123456.789");
}

TEST(Jcs, AcceptsNestingUpToTheLimit) {
  const std::string deep = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_EQ(Canonical(deep), deep);
}

// ---- Rejections ------------------------------------------------------------------------------

struct Rejection {
  std::string input;
  std::string message;  // the whole expected message, without the "invalid_argument: " prefix
};

TEST(JcsRejects, EveryKindWithProblemAndByteOffset) {
  const std::vector<Rejection> cases = {
      {R"({"a":1,"b":2,"a":3})", R"(duplicate member name "a" at byte 13)"},
      {R"({"x":{"\u0061":1,"a":2}})", R"(duplicate member name "a" at byte 17)"},
      {R"(["\ud800"])", R"(lone surrogate \ud800 at byte 2)"},
      {R"(["\ud800\u0041"])", R"(lone surrogate \ud800 at byte 2)"},
      {R"(["x\uDC00"])", R"(lone surrogate \uDC00 at byte 3)"},
      {"[\"\xED\xA0\x80\"]", "lone surrogate encoded as UTF-8 at byte 2"},
      {"[1e400]", "number 1e400 at byte 1 does not fit a finite double"},
      {"-1.8e308", "number -1.8e308 at byte 0 does not fit a finite double"},
      {"[\"abc\xC3\x28\"]", "invalid UTF-8 at byte 5"},
      {"\"\xC0\xAF\"", "invalid UTF-8 at byte 1"},          // overlong '/'
      {"\"\xF4\x90\x80\x80\"", "invalid UTF-8 at byte 1"},  // above U+10FFFF
      {"\"\xE2\x82\"", "invalid UTF-8 at byte 1"},          // truncated
      {"[x]", "unexpected character 'x' at byte 1, expected a value"},
      {"[NaN]", "unexpected 'NaN' at byte 1: NaN and Infinity are not JSON numbers"},
      {"[Infinity]", "unexpected 'Infinity' at byte 1: NaN and Infinity are not JSON numbers"},
      {"-Infinity", "unexpected '-Infinity' at byte 0: NaN and Infinity are not JSON numbers"},
      {"{\"a\":1} x", "trailing data at byte 8"},
      {"[1] [2]", "trailing data at byte 4"},
      {"", "unexpected end of input at byte 0, expected a value"},
      {"[1,2", "unexpected end of input at byte 4, expected ',' or ']'"},
      {"[1,]", "unexpected character ']' at byte 3, expected a value"},
      {"{\"a\":1,}", "unexpected character '}' at byte 7, expected a member name"},
      {"{\"a\" 1}", "unexpected character '1' at byte 5, expected ':'"},
      {"{a:1}", "unexpected character 'a' at byte 1, expected a member name"},
      {"[01]", "leading zero in number at byte 1"},
      {"[1.]", "unexpected character ']' at byte 3, expected a digit after '.'"},
      {"[1e]", "unexpected character ']' at byte 3, expected a digit in the exponent"},
      {"[-]", "unexpected character ']' at byte 2, expected a digit"},
      {"[+1]", "unexpected character '+' at byte 1, expected a value"},
      {"[tru]", "invalid literal 'tru' at byte 1, expected true"},
      {"nulL", "invalid literal 'nulL' at byte 0, expected null"},
      {"[\"a\nb\"]", "unescaped control character 0x0a in string at byte 3"},
      {R"(["\x"])", "invalid escape: backslash followed by character 'x' at byte 2"},
      {R"(["\u12G4"])", "invalid \\u escape (needs four hex digits) at byte 2"},
      {"[\"abc", "unterminated string starting at byte 1"},
      {"\xEF\xBB\xBF[]", "byte order mark at byte 0 (JSON text must not start with one)"},
      {"[\xC3\xA9]", "unexpected byte 0xc3 at byte 1, expected a value"},
      {std::string(1001, '[') + std::string(1001, ']'),
       "nesting deeper than 1000 levels at byte 1000"},
  };
  for (const Rejection& c : cases) {
    Result<std::string> result = CanonicalizeJson(c.input);
    ASSERT_FALSE(result) << "accepted: " << c.input.substr(0, 60);
    EXPECT_EQ(result.error().code(), Errc::kInvalidArgument) << c.input.substr(0, 60);
    EXPECT_EQ(result.error().message(), c.message) << c.input.substr(0, 60);
  }
}

TEST(JcsRejects, LongNumbersAreShortenedInTheMessage) {
  const std::string huge = "1" + std::string(400, '0');
  Result<std::string> result = CanonicalizeJson(huge);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message(),
            "number " + huge.substr(0, 40) + "... at byte 0 does not fit a finite double");
  EXPECT_TRUE(CanonicalizeJson("1" + std::string(300, '0'))) << "1e300 fits";
  EXPECT_TRUE(CanonicalizeJson("[1e-99999999999999999999999]")) << "underflow is zero";
}

// ---- In-memory values ------------------------------------------------------------------------

TEST(JcsValue, CanonicalizesLikeText) {
  const boost::json::value value = {{"b", {1, 2.5, "x"}}, {"a", nullptr}, {"c", true}};
  EXPECT_EQ(CanonicalizeJson(value).value(), R"({"a":null,"b":[1,2.5,"x"],"c":true})");
}

TEST(JcsValue, AcceptsIntegersUpTo2To53) {
  const std::int64_t limit = std::int64_t{1} << 53;
  EXPECT_EQ(CanonicalizeJson(boost::json::value(limit)).value(), "9007199254740992");
  EXPECT_EQ(CanonicalizeJson(boost::json::value(-limit)).value(), "-9007199254740992");
  EXPECT_EQ(CanonicalizeJson(boost::json::value(std::uint64_t{1} << 53)).value(),
            "9007199254740992");
}

TEST(JcsValue, RejectsWhatWouldNotSurvive) {
  const std::int64_t limit = std::int64_t{1} << 53;
  struct Case {
    boost::json::value value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {boost::json::value(limit + 1),
       "integer 9007199254740993 at the root has a magnitude above 2^53 and would not survive "
       "as a double"},
      {boost::json::object{{"a", boost::json::array{0, -limit - 1}}},
       "integer -9007199254740993 at /a/1 has a magnitude above 2^53 and would not survive as a "
       "double"},
      {boost::json::value(std::numeric_limits<std::uint64_t>::max()),
       "integer 18446744073709551615 at the root has a magnitude above 2^53 and would not "
       "survive as a double"},
      {boost::json::object{{"x/y~", std::nan("")}}, "number at /x~1y~0 is not finite"},
      {boost::json::array{std::numeric_limits<double>::infinity()}, "number at /0 is not finite"},
      {boost::json::object{{"s", "ok\xFF"}}, "invalid UTF-8 at byte 2 of the string at /s"},
      {boost::json::object{{"\xC3", 1}}, "invalid UTF-8 at byte 0 of the member name at /\xC3"},
  };
  for (const Case& c : cases) {
    Result<std::string> result = CanonicalizeJson(c.value);
    ASSERT_FALSE(result) << c.message;
    EXPECT_EQ(result.error().code(), Errc::kInvalidArgument);
    EXPECT_EQ(result.error().message(), c.message);
  }
}

// ---- ParseStrictJson -------------------------------------------------------------------------

TEST(JcsParse, KeepsIntegersAndRoundsDoublesCorrectly) {
  const boost::json::value value =
      ParseStrictJson(R"({"i":-12,"u":18446744073709551615,"d":1.0,"r":9.999999999999997e-7})")
          .value();
  EXPECT_EQ(value.at("i").as_int64(), -12);
  EXPECT_EQ(value.at("u").as_uint64(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(value.at("d").as_double(), 1.0);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(value.at("r").as_double()), 0x3eb0c6f7a0b5ed8cu);
  EXPECT_TRUE(ParseStrictJson("123456789012345678901234567890").value().is_double());
}

TEST(JcsParse, RejectsLikeCanonicalize) {
  Result<boost::json::value> result = ParseStrictJson(R"({"a":1,"a":2})");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message(), R"(duplicate member name "a" at byte 7)");
  // An integer literal above 2^53 parses, but then cannot be canonicalized without loss.
  EXPECT_FALSE(CanonicalizeJson(ParseStrictJson("9007199254740993").value()));
}

}  // namespace
}  // namespace reckon
