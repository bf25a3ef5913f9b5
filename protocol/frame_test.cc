// Frames: round trips through the standard framing, and every way a frame can be wrong.
#include <gtest/gtest.h>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstring>
#include <vector>

#include "reckon/protocol/frame.h"
#include "reckon/protocol/reckon.capnp.h"

namespace reckon::api {
namespace {

std::vector<std::byte> StartRequestBytes(const std::string& input_json) {
  capnp::MallocMessageBuilder message;
  auto request = message.initRoot<wire::Request>();
  request.setId(42);
  request.setTimeoutMs(1500);
  auto start = request.initMethod().initStartWorkflow();
  start.setWorkflowId("refund-1");
  start.setWorkflowType("refund");
  start.setInputJson(input_json);
  Frame frame = EncodeFrame(message);
  return {frame.bytes().begin(), frame.bytes().end()};
}

TEST(FrameTest, RoundTripsARequest) {
  auto bytes = StartRequestBytes(R"({"amount_cents":1200})");
  FrameLimits limits;
  auto frame = ParseFrame(bytes, limits);
  ASSERT_TRUE(frame) << frame.error().ToString();
  capnp::FlatArrayMessageReader reader(frame.value().words(), limits.ReaderOptions());
  auto request = reader.getRoot<wire::Request>();
  EXPECT_EQ(request.getId(), 42u);
  EXPECT_EQ(request.getTimeoutMs(), 1500u);
  ASSERT_TRUE(request.getMethod().isStartWorkflow());
  EXPECT_STREQ(request.getMethod().getStartWorkflow().getWorkflowId().cStr(), "refund-1");
  EXPECT_STREQ(request.getMethod().getStartWorkflow().getInputJson().cStr(),
               R"({"amount_cents":1200})");
}

TEST(FrameTest, MultiSegmentMessagesRoundTrip) {
  capnp::MallocMessageBuilder message(16, capnp::AllocationStrategy::FIXED_SIZE);
  auto response = message.initRoot<wire::Response>();
  response.setId(7);
  auto lines = response.initResult().initTrace(200);
  for (unsigned i = 0; i < 200; ++i) lines.set(i, "line " + std::to_string(i));
  ASSERT_GT(message.getSegmentsForOutput().size(), 1u);
  Frame frame = EncodeFrame(message);
  FrameLimits limits;
  limits.max_segments = 1024;
  auto parsed = ParseFrame(frame.bytes(), limits);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  capnp::FlatArrayMessageReader reader(parsed.value().words(), limits.ReaderOptions());
  EXPECT_EQ(reader.getRoot<wire::Response>().getResult().getTrace().size(), 200u);
  EXPECT_STREQ(reader.getRoot<wire::Response>().getResult().getTrace()[199].cStr(), "line 199");
}

TEST(FrameTest, TruncatedFramesAreRefusedWithTheReason) {
  auto bytes = StartRequestBytes("{}");
  FrameLimits limits;
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, std::size_t{8}, bytes.size() - 1}) {
    auto frame = ParseFrame(std::span(bytes).first(cut), limits);
    ASSERT_FALSE(frame) << "cut at " << cut;
    EXPECT_EQ(frame.error().code(), Errc::kInvalidArgument);
    EXPECT_NE(frame.error().message().find("frame"), std::string::npos);
  }
}

TEST(FrameTest, OversizedFramesAreRefusedFromTheirHeader) {
  auto bytes = StartRequestBytes(std::string(100000, 'x'));
  FrameLimits limits;
  limits.max_message_bytes = 64 * 1024;
  auto frame = ParseFrame(bytes, limits);
  ASSERT_FALSE(frame);
  EXPECT_NE(frame.error().message().find("exceeds the limit of 65536 bytes"), std::string::npos)
      << frame.error().message();
  // The header alone decides: a lying header is refused before any body is read.
  std::vector<std::byte> header(8, std::byte{0});
  header[4] = std::byte{0xff};
  header[5] = std::byte{0xff};
  header[6] = std::byte{0xff};
  header[7] = std::byte{0x0f};
  auto size = BodyBytes(header, limits);
  ASSERT_FALSE(size);
  EXPECT_NE(size.error().message().find("exceeds the limit"), std::string::npos);
}

TEST(FrameTest, TooManySegmentsAreRefused) {
  std::vector<std::byte> first(8, std::byte{0});
  first[0] = std::byte{0xff};
  first[1] = std::byte{0xff};
  FrameLimits limits;
  auto rest = SegmentTableRemainder(std::span<const std::byte, 8>(first.data(), 8), limits);
  ASSERT_FALSE(rest);
  EXPECT_NE(rest.error().message().find("65536 segments; the limit is 64"), std::string::npos)
      << rest.error().message();
}

TEST(FrameTest, AnEmptyFirstSegmentIsRefused) {
  std::vector<std::byte> table(8, std::byte{0});
  auto body = BodyBytes(table, FrameLimits{});
  ASSERT_FALSE(body);
  EXPECT_NE(body.error().message().find("no root pointer"), std::string::npos);
}

TEST(FrameTest, GarbageInsideAWellFramedMessageFailsWhenRead) {
  // A frame whose root pointer points far outside its segment: framing accepts it, the
  // reader refuses it (the server reads the whole message up front and closes the connection).
  std::vector<std::byte> bytes(16, std::byte{0});
  bytes[4] = std::byte{1};                                // one segment of one word
  const std::uint64_t bad_pointer = (std::uint64_t{1000} << 2) | (std::uint64_t{1} << 32);
  std::memcpy(bytes.data() + 8, &bad_pointer, 8);
  FrameLimits limits;
  auto frame = ParseFrame(bytes, limits);
  ASSERT_TRUE(frame) << frame.error().ToString();
  capnp::FlatArrayMessageReader reader(frame.value().words(), limits.ReaderOptions());
  EXPECT_ANY_THROW({
    auto request = reader.getRoot<wire::Request>();
    (void)request.totalSize();
  });
}

}  // namespace
}  // namespace reckon::api
