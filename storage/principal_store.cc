#include "reckon/storage/principal_store.h"

namespace reckon::storage {

std::string JoinScopes(const std::vector<std::string>& scopes) {
  std::string out;
  for (const std::string& scope : scopes) {
    if (!out.empty()) out += ',';
    out += scope;
  }
  return out;
}

std::vector<std::string> SplitScopes(std::string_view text) {
  std::vector<std::string> scopes;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    scopes.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return scopes;
}

}  // namespace reckon::storage
