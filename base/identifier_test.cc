// The identifier and text rules of base/identifier.h: every kind accepts what the engine and
// its users make, and refuses a 100 KB value, a newline, a NUL, bytes that are not UTF-8 and
// the empty string, with a message that names the field, says what is wrong and gives the rule
// without echoing the raw bytes.
#include "reckon/base/identifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace reckon {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<IdKind> kAllKinds = {
    IdKind::kWorkflowId,    IdKind::kWorkflowType, IdKind::kSignalName,
    IdKind::kWorkerId,      IdKind::kOperationId,  IdKind::kApprovalId,
    IdKind::kPrincipalName, IdKind::kToolName,     IdKind::kIntentHash};

std::string Message(const Result<void>& r) { return r ? std::string("ok") : r.error().message(); }

TEST(IdentifierTest, AcceptsWhatTheEngineAndItsUsersMake) {
  const std::vector<std::string> ids = {"order-1001",         "refund-pay-3",     "a",
                                        "wf:2026/11/30",      "user@example.com", "A.B_C-D",
                                        std::string(128, 'x')};
  for (const std::string& id : ids) {
    EXPECT_TRUE(ValidateId(IdKind::kWorkflowId, id)) << id;
  }
  EXPECT_TRUE(ValidateId(IdKind::kWorkflowType, "signal_then_call"));
  EXPECT_TRUE(ValidateId(IdKind::kWorkflowType, "plan"));
  EXPECT_TRUE(ValidateId(IdKind::kSignalName, "approved"));
  EXPECT_TRUE(ValidateId(IdKind::kWorkerId, "build-host.example.com-4242"));
  EXPECT_TRUE(ValidateId(IdKind::kOperationId, "op_0123456789abcdef0123456789abcdef"));
  EXPECT_TRUE(ValidateId(IdKind::kApprovalId, "ap_0123456789ab_1"));
  EXPECT_TRUE(ValidatePrincipalName("alice"));
  EXPECT_TRUE(ValidatePrincipalName("alice@example.com"));
  EXPECT_TRUE(ValidatePrincipalName(std::string(64, 'p')));
  EXPECT_TRUE(ValidateId(IdKind::kToolName, "send_refund"));
  EXPECT_TRUE(ValidateId(IdKind::kToolName, "model.propose"));
  EXPECT_TRUE(ValidateId(IdKind::kIntentHash, std::string(64, 'a')));
}

TEST(IdentifierTest, EveryKindRefusesTheBadInputsWithAMessageNamingFieldProblemAndRule) {
  const std::string huge(100 * 1024, 'a');
  for (IdKind kind : kAllKinds) {
    const std::string name(IdKindName(kind));
    SCOPED_TRACE(name);
    auto empty = ValidateId(kind, "");
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code(), Errc::kInvalidArgument);
    EXPECT_EQ(empty.error().message(),
              name + " is empty; " +
                  (std::string("aeiou").find(name[0]) != std::string::npos ? "an " : "a ") + name +
                  " is " + std::string(IdRule(kind)));

    auto big = ValidateId(kind, huge, "theField");
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().code(), Errc::kInvalidArgument);
    EXPECT_THAT(big.error().message(),
                HasSubstr(std::string("theField 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'... "
                                      "(102400 bytes) is not valid: it is 102400 bytes long; ") +
                          (std::string("aeiou").find(name[0]) != std::string::npos ? "an " : "a ") +
                          name + " is "));
    EXPECT_LT(big.error().message().size(), 400u);  // the value is not copied into the message

    auto newline = ValidateId(kind, "ab\nc");
    ASSERT_FALSE(newline);
    EXPECT_THAT(newline.error().message(), HasSubstr("'ab\\x0ac' is not valid"));
    EXPECT_THAT(Message(newline), Not(HasSubstr("\n")));

    auto nul = ValidateId(kind, std::string("ab\0c", 4));
    ASSERT_FALSE(nul);
    EXPECT_THAT(nul.error().message(), HasSubstr("'ab\\x00c' is not valid"));

    auto not_utf8 = ValidateId(kind, "ab\xff\xfe");
    ASSERT_FALSE(not_utf8);
    EXPECT_THAT(not_utf8.error().message(), HasSubstr("'ab\\xff\\xfe' is not valid"));
  }
}

TEST(IdentifierTest, SaysWhatIsWrong) {
  EXPECT_EQ(Message(ValidateId(IdKind::kWorkflowId, "ab\nc", "workflowId")),
            "workflowId 'ab\\x0ac' is not valid: it contains a newline (0x0a) at byte 2; a "
            "workflow id is 1-128 bytes of A-Z a-z 0-9 _ - . : @ /, starting with a letter or "
            "digit");
  EXPECT_THAT(Message(ValidateId(IdKind::kWorkflowId, std::string("a\0", 2))),
              HasSubstr("it contains a NUL byte at byte 1"));
  EXPECT_THAT(Message(ValidateId(IdKind::kWorkflowId, "a\x1b[31m")),
              HasSubstr("it contains the control character 0x1b at byte 1"));
  EXPECT_THAT(Message(ValidateId(IdKind::kWorkflowId, "a\xff")),
              HasSubstr("it is not valid UTF-8 (byte 0xff at byte 1)"));
  EXPECT_THAT(Message(ValidateId(IdKind::kWorkflowId, "caf\xc3\xa9")),
              HasSubstr("it contains a non-ASCII character at byte 3"));
  EXPECT_THAT(Message(ValidateId(IdKind::kWorkflowId, "a b")),
              HasSubstr("it contains a space at byte 1"));
  EXPECT_THAT(Message(ValidateId(IdKind::kWorkflowId, "a'b")),
              HasSubstr("'a\\x27b' is not valid: it contains ''' at byte 1, which is not allowed"));
  EXPECT_THAT(Message(ValidateId(IdKind::kWorkflowId, "-rf")), HasSubstr("it starts with '-'"));
  EXPECT_THAT(Message(ValidateId(IdKind::kWorkflowId, std::string(129, 'x'))),
              HasSubstr("it is 129 bytes long"));
  EXPECT_THAT(Message(ValidatePrincipalName("alice:admin")),
              HasSubstr("principal name 'alice:admin' is not valid: it contains ':' at byte 5"));
  EXPECT_THAT(Message(ValidatePrincipalName(std::string(65, 'p'))), HasSubstr("65 bytes long"));
  EXPECT_THAT(Message(ValidateId(IdKind::kToolName, "Send_Refund")),
              HasSubstr("it contains 'S' at byte 0"));
  EXPECT_THAT(Message(ValidateId(IdKind::kIntentHash, "abc")),
              HasSubstr("it is 3 bytes long; an intent hash is 64 lowercase hex digits"));
}

TEST(IdentifierTest, TextsAreOneLineOfUtf8) {
  EXPECT_TRUE(ValidateText(TextKind::kText, "", "reason"));
  EXPECT_TRUE(ValidateText(TextKind::kText, "changed my mind, caf\xc3\xa9 \xe2\x9c\x93", "reason"));
  EXPECT_TRUE(ValidateText(TextKind::kText, std::string(1024, 'n'), "note"));
  EXPECT_THAT(Message(ValidateText(TextKind::kText, std::string(1025, 'n'), "note")),
              HasSubstr("note 'nnnn"));
  EXPECT_THAT(Message(ValidateText(TextKind::kText, std::string(1025, 'n'), "note")),
              HasSubstr("it is 1025 bytes long; a text field is at most 1024 bytes of UTF-8 on "
                        "one line, without control characters"));
  EXPECT_THAT(Message(ValidateText(TextKind::kText, "two\nlines", "reason")),
              HasSubstr("reason 'two\\x0alines' is not valid: it contains a newline"));
  EXPECT_THAT(Message(ValidateText(TextKind::kText, std::string("a\0b", 3), "reason")),
              HasSubstr("NUL byte at byte 1"));
  EXPECT_THAT(Message(ValidateText(TextKind::kText, "bad \xc3(", "reason")),
              HasSubstr("not valid UTF-8 (byte 0xc3 at byte 4)"));
  EXPECT_THAT(Message(ValidateText(TextKind::kText, "csi \xc2\x9b", "reason")),
              HasSubstr("the control character U+009b at byte 4"));
  EXPECT_TRUE(ValidateText(TextKind::kProviderRef, "re_123", "providerRef"));
  EXPECT_THAT(Message(ValidateText(TextKind::kProviderRef, std::string(257, 'r'), "providerRef")),
              HasSubstr("a provider ref is at most 256 bytes"));
}

TEST(IdentifierTest, QuotesSafely) {
  EXPECT_EQ(QuoteForMessage("plain-id"), "'plain-id'");
  EXPECT_EQ(QuoteForMessage("a\\b'c\x7f\x80"), "'a\\x5cb\\x27c\\x7f\\x80'");
  EXPECT_EQ(QuoteForMessage("abcdef", 3), "'abc'... (6 bytes)");
}

TEST(IdentifierTest, CleanMessagesAreValidUtf8WholeAndWithoutControls) {
  EXPECT_EQ(CleanMessage("cursor 'abc' is not one"), "cursor 'abc' is not one");
  EXPECT_EQ(CleanMessage("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");  // kept
  EXPECT_EQ(CleanMessage("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(CleanMessage(std::string_view("a\0b", 3)), "a\\x00b");  // whole, not cut at NUL
  EXPECT_EQ(CleanMessage("a\x1b[31mb\x7f"), "a\\x1b[31mb\\x7f");
  EXPECT_EQ(CleanMessage("a\xc2\x9b" "b"), "a\\xc2\\x9bb");  // C1 (a terminal's CSI)
  EXPECT_EQ(CleanMessage("\xe2\x82"), "\\xe2\\x82");          // a truncated sequence
  EXPECT_EQ(CleanMessage("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // an encoded surrogate
  EXPECT_EQ(CleanMessage("problems:\n  - one\tx"), "problems:\n  - one\tx");
  const std::string once = CleanMessage(std::string_view("\xff\x00\x01", 3));
  EXPECT_EQ(CleanMessage(once), once);
}

}  // namespace
}  // namespace reckon
