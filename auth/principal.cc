#include "reckon/auth/principal.h"

namespace reckon::auth {

std::vector<std::string> ScopesOf(const Principal& principal) {
  std::vector<std::string> scopes;
  for (const std::string& tool : principal.tools) scopes.push_back("tool:" + tool);
  for (const std::string& type : principal.workflow_types) scopes.push_back("workflow:" + type);
  return scopes;
}

Result<void> ApplyScopes(const std::vector<std::string>& scopes, Principal& principal) {
  for (const std::string& scope : scopes) {
    if (scope.starts_with("tool:")) {
      principal.tools.push_back(scope.substr(5));
    } else if (scope.starts_with("workflow:")) {
      principal.workflow_types.push_back(scope.substr(9));
    } else {
      return Err(Errc::kInvalidArgument, "principal '" + principal.name + "' has a scope '" +
                                             scope + "' this release does not know");
    }
  }
  return Ok();
}

}  // namespace reckon::auth
