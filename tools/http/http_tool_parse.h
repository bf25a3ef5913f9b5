// The checks of one tool of a tools file (tools/http/http_tools_file.h), split from the file's
// own: every problem found is appended to `problems`, prefixed with the tool and the field,
// and nothing stops at the first. Stateless; used only by the tools file loader and its test.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/tools/http/http_tools_file.h"

namespace reckon::tools {

// Appends "<field>: unknown member 'x' (expected a, b, c)" for each member not in `allowed`.
void CheckMembers(const boost::json::object& object, std::initializer_list<std::string_view> allowed,
                  const std::string& field, std::vector<std::string>& problems);

// tools[index] of a file whose declared secrets are `secrets` (values may be empty here).
// nullopt when the tool has any problem.
std::optional<HttpToolSpec> ParseHttpTool(const boost::json::value& tool, std::size_t index,
                                          const std::map<std::string, std::string>& secrets,
                                          const EnvLookup& env,
                                          std::vector<std::string>& problems);

}  // namespace reckon::tools
