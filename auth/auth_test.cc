#include <gtest/gtest.h>

#include <map>
#include <set>

#include "reckon/auth/principal.h"
#include "reckon/auth/role.h"
#include "reckon/auth/token.h"

namespace reckon::auth {
namespace {

constexpr Role kRoles[] = {Role::kAdmin, Role::kOperator, Role::kApprover, Role::kReader,
                           Role::kWorker};
constexpr Permission kPermissions[] = {
    Permission::kManagePrincipals, Permission::kStart,   Permission::kSignal,
    Permission::kCancel,           Permission::kApprove, Permission::kResolve,
    Permission::kRead,             Permission::kWork};

TEST(TokenTest, IsTwoHundredFiftySixRandomBitsInAFixedShape) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto token = GenerateToken();
    ASSERT_TRUE(token);
    EXPECT_TRUE(LooksLikeToken(token.value())) << token.value();
    EXPECT_EQ(token.value().size(), 4u + 64u);
    EXPECT_TRUE(seen.insert(token.value()).second);
  }
}

TEST(TokenTest, HashIsSha256HexAndNeverTheToken) {
  auto token = GenerateToken();
  ASSERT_TRUE(token);
  const std::string hash = TokenHash(token.value());
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(hash.find(token.value().substr(4)), std::string::npos);
  EXPECT_EQ(hash, TokenHash(token.value()));
  // SHA-256 of "abc".
  EXPECT_EQ(TokenHash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokenTest, ParseTrimsAFileAndRefusesWhatIsNotAToken) {
  auto token = GenerateToken();
  ASSERT_TRUE(token);
  auto parsed = ParseToken("  " + token.value() + "\n", "token file t");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed.value(), token.value());
  for (std::string bad : {std::string(""), std::string("hunter2"), token.value() + "0",
                          "RK1_" + token.value().substr(4), token.value().substr(0, 67) + "G"}) {
    auto refused = ParseToken(bad, "token file t");
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.error().code(), Errc::kInvalidArgument);
    EXPECT_NE(refused.error().message().find("token file t"), std::string::npos);
    if (bad.size() > 4) {
      EXPECT_EQ(refused.error().message().find(bad), std::string::npos);
    }
  }
}

TEST(RoleTest, NamesRoundTrip) {
  for (Role role : kRoles) EXPECT_EQ(ParseRole(RoleName(role)), role);
  EXPECT_FALSE(ParseRole("root"));
  EXPECT_FALSE(ParseRole("Admin"));
}

TEST(RoleTest, SeveralRolesParseInOrderWithoutRepeats) {
  auto roles = ParseRoles("operator,approver,operator");
  ASSERT_TRUE(roles);
  EXPECT_EQ(roles.value(), (std::vector<Role>{Role::kOperator, Role::kApprover}));
  EXPECT_EQ(RolesText(roles.value()), "operator,approver");
  for (const char* bad : {"", "operator,", "root", "operator,root"}) {
    auto refused = ParseRoles(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message().find("is not one of"), std::string::npos);
  }
  Principal both{"ann", roles.value(), {}, {}, 0};
  EXPECT_TRUE(both.Grants(Permission::kStart));
  EXPECT_TRUE(both.Grants(Permission::kApprove));
  EXPECT_FALSE(both.Grants(Permission::kWork));
  Principal dev{"dev", {}, {}, {}, 0, true};
  EXPECT_TRUE(dev.Grants(Permission::kManagePrincipals));
}

TEST(RoleTest, EachRoleGrantsExactlyItsPermissions) {
  const std::map<Role, std::set<Permission>> expected = {
      {Role::kAdmin, {Permission::kManagePrincipals}},
      {Role::kOperator, {Permission::kStart, Permission::kSignal, Permission::kCancel,
                         Permission::kRead}},
      {Role::kApprover, {Permission::kApprove, Permission::kResolve, Permission::kRead}},
      {Role::kReader, {Permission::kRead}},
      {Role::kWorker, {Permission::kWork}},
  };
  for (Role role : kRoles) {
    for (Permission permission : kPermissions) {
      EXPECT_EQ(RoleGrants(role, permission), expected.at(role).contains(permission))
          << RoleName(role) << " " << PermissionName(permission);
      if (RoleGrants(role, permission)) {
        EXPECT_NE(std::string(RolesGranting(permission)).find(RoleName(role)), std::string::npos);
      }
    }
  }
}

TEST(PrincipalTest, ScopesNarrowAndRoundTrip) {
  Principal p{"ann", {Role::kWorker}, {"send_refund"}, {"refund"}, 0};
  EXPECT_TRUE(p.AllowsTool("send_refund"));
  EXPECT_FALSE(p.AllowsTool("wire_money"));
  EXPECT_TRUE(p.AllowsWorkflowType("refund"));
  EXPECT_FALSE(p.AllowsWorkflowType("payout"));
  Principal back{"ann", {Role::kWorker}, {}, {}, 0};
  ASSERT_TRUE(ApplyScopes(ScopesOf(p), back));
  EXPECT_EQ(back.tools, p.tools);
  EXPECT_EQ(back.workflow_types, p.workflow_types);
  Principal unscoped{"bob", {Role::kApprover}, {}, {}, 0};
  EXPECT_TRUE(unscoped.AllowsTool("anything"));
  EXPECT_FALSE(ApplyScopes({"queue:x"}, back));
}

}  // namespace
}  // namespace reckon::auth
