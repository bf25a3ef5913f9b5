#include "reckon/tools/http/http_url.h"

#include <gtest/gtest.h>

namespace reckon::tools {
namespace {

TEST(HttpUrlTest, SplitsHostPortAndTarget) {
  EXPECT_EQ(ParseHttpUrl("http://127.0.0.1:8181/refunds?idempotency_key=op_1").value(),
            (HttpUrl{"127.0.0.1", 8181, "/refunds?idempotency_key=op_1"}));
  EXPECT_EQ(ParseHttpUrl("http://api.example.com").value(), (HttpUrl{"api.example.com", 80, "/"}));
  EXPECT_EQ(ParseHttpUrl("http://h:1?x=1").value(), (HttpUrl{"h", 1, "/?x=1"}));
  EXPECT_EQ(ParseHttpUrl("http://[::1]:9/p").value(), (HttpUrl{"::1", 9, "/p"}));
}

TEST(HttpUrlTest, RefusesWhatItCannotCallNamingThePart) {
  for (const auto& [url, part] : std::vector<std::pair<std::string, std::string>>{
           {"https://h/x", "https is not supported"},
           {"ftp://h/x", "must start with http://"},
           {"http://:80/x", "the host is empty"},
           {"http://h:0/x", "1..65535"},
           {"http://h:70000/x", "1..65535"},
           {"http://h:8x/x", "1..65535"},
           {"http://h:/x", "the port is empty"},
           {"http://user@h/x", "user info"},
           {"http://h/x#frag", "fragment"},
           {"http://[::1/x", "lacks its ']'"}}) {
    auto parsed = ParseHttpUrl(url);
    ASSERT_FALSE(parsed) << url;
    EXPECT_EQ(parsed.error().code(), Errc::kInvalidArgument);
    EXPECT_NE(parsed.error().message().find(part), std::string::npos) << parsed.error().message();
  }
}

TEST(HttpUrlTest, PercentEncodesAllButUnreserved) {
  EXPECT_EQ(PercentEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(PercentEncode("a b/c?d=e&f"), "a%20b%2Fc%3Fd%3De%26f");
  EXPECT_EQ(PercentEncode("\xc3\xa9"), "%C3%A9");
}

}  // namespace
}  // namespace reckon::tools
