#include "reckon/contract/field_path.h"

namespace reckon {
namespace {

const boost::json::object* PropertiesOf(const boost::json::value& schema) {
  const auto* object = schema.if_object();
  if (object == nullptr) return nullptr;
  const auto* properties = object->if_contains("properties");
  return properties == nullptr ? nullptr : properties->if_object();
}

bool IsRequired(const boost::json::value& schema, std::string_view name) {
  const auto* required = schema.is_object() ? schema.get_object().if_contains("required") : nullptr;
  if (required == nullptr || !required->is_array()) return false;
  for (const auto& entry : required->get_array()) {
    if (entry.is_string() && entry.get_string() == name) return true;
  }
  return false;
}

void CollectLeaves(const boost::json::value& schema, const std::string& prefix,
                   std::vector<std::string>& out) {
  const auto* properties = PropertiesOf(schema);
  if (properties == nullptr) return;
  for (const auto& member : *properties) {
    std::string path = prefix.empty() ? std::string(member.key())
                                      : prefix + "." + std::string(member.key());
    if (PropertiesOf(member.value()) != nullptr) {
      CollectLeaves(member.value(), path, out);
    } else {
      out.push_back(std::move(path));
    }
  }
}

}  // namespace

bool IsValidFieldPath(std::string_view path) {
  if (path.empty() || path.front() == '.' || path.back() == '.') return false;
  return path.find("..") == std::string_view::npos;
}

std::vector<std::string> SplitFieldPath(std::string_view path) {
  std::vector<std::string> segments;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = path.find('.', start);
    segments.emplace_back(path.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return segments;
}

const boost::json::value* FindField(const boost::json::value& input, std::string_view path) {
  const boost::json::value* current = &input;
  for (const std::string& segment : SplitFieldPath(path)) {
    const auto* object = current->if_object();
    if (object == nullptr) return nullptr;
    current = object->if_contains(segment);
    if (current == nullptr) return nullptr;
  }
  return current;
}

DeclaredField FindDeclaredField(const boost::json::value& schema, std::string_view path) {
  DeclaredField field{&schema, true};
  for (const std::string& segment : SplitFieldPath(path)) {
    const auto* properties = PropertiesOf(*field.schema);
    const boost::json::value* child =
        properties == nullptr ? nullptr : properties->if_contains(segment);
    if (child == nullptr) return DeclaredField{};
    field.required = field.required && IsRequired(*field.schema, segment);
    field.schema = child;
  }
  return field;
}

std::vector<std::string> DeclaredFieldPaths(const boost::json::value& schema) {
  std::vector<std::string> out;
  CollectLeaves(schema, "", out);
  return out;
}

}  // namespace reckon
