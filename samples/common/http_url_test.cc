#include "samples/common/http_url.h"

#include <gtest/gtest.h>

namespace reckon::samples {
namespace {

TEST(ParseHttpUrl, AcceptsLoopbackWithPort) {
  Result<HttpEndpoint> endpoint = ParseHttpUrl("http://127.0.0.1:8080");
  ASSERT_TRUE(endpoint) << endpoint.error().ToString();
  EXPECT_EQ(endpoint.value(), (HttpEndpoint{"127.0.0.1", 8080}));
  ASSERT_TRUE(ParseHttpUrl("http://127.0.0.1:1/"));
  EXPECT_EQ(ParseHttpUrl("http://127.0.0.1:65535/").value().port, 65535);
}

TEST(ParseHttpUrl, RefusesEverythingElseNamingThePart) {
  struct Case {
    const char* url;
    const char* mentions;
  };
  for (const Case& c : {Case{"https://127.0.0.1:80", "scheme"},
                        Case{"127.0.0.1:80", "scheme"},
                        Case{"http://localhost:80", "host"},
                        Case{"http://10.0.0.1:80", "host"},
                        Case{"http://127.0.0.1", "port is missing"},
                        Case{"http://127.0.0.1:", "port is missing"},
                        Case{"http://127.0.0.1:0", "outside"},
                        Case{"http://127.0.0.1:70000", "outside"},
                        Case{"http://127.0.0.1:80/refunds", "not a number"},
                        Case{"http://127.0.0.1:80?x=1", "not a number"},
                        Case{"http://127.0.0.1:-1", "not a number"},
                        Case{"", "scheme"}}) {
    Result<HttpEndpoint> endpoint = ParseHttpUrl(c.url);
    ASSERT_FALSE(endpoint) << c.url;
    EXPECT_EQ(endpoint.error().code(), Errc::kInvalidArgument) << c.url;
    EXPECT_NE(endpoint.error().message().find(c.mentions), std::string::npos)
        << c.url << " -> " << endpoint.error().message();
  }
}

}  // namespace
}  // namespace reckon::samples
