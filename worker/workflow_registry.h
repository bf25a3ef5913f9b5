// The workflow types a worker hosts: name -> coroutine function. Built in main(), never global.
// Register is not thread-safe; Find is, once registration is over. Functions are stored for the
// life of the registry, which must outlive every instance made from them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/worker/workflow_instance.h"

namespace reckon {

class WorkflowRegistry {
 public:
  Result<void> Register(std::string name, WorkflowFunction function) {
    if (name.empty() || !function) {
      return Err(Errc::kInvalidArgument, "a workflow needs a name and a function");
    }
    if (!functions_.emplace(name, std::move(function)).second) {
      return Err(Errc::kAlreadyExists, "workflow type '" + name + "' is already registered");
    }
    return Ok();
  }
  const WorkflowFunction* Find(const std::string& name) const {
    auto it = functions_.find(name);
    return it == functions_.end() ? nullptr : &it->second;
  }
  // Every registered type, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& [name, function] : functions_) names.push_back(name);
    return names;
  }

 private:
  std::map<std::string, WorkflowFunction> functions_;
};

}  // namespace reckon
