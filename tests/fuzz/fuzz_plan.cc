// Fuzz target: an agent plan (plan/plan.h) as `reckon plan run` and the refund agent read it:
// ParsePlan, then ValidatePlan against the refund sample's contracts (the tools the sample
// plans use), PlanToJson and PlanHash. Besides not crashing: a plan that parses survives
// PlanToJson and back with the same hash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "reckon/plan/plan.h"
#include "samples/refund/refund_contracts.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

const reckon::ContractRegistry& Contracts() {
  static const reckon::ContractRegistry registry = [] {
    reckon::ContractRegistry r;
    FUZZ_CHECK(reckon::refund::RegisterRefundContracts(r).has_value(),
               "the refund sample's contracts do not register");
    return r;
  }();
  return registry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto plan = reckon::ParsePlan(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!plan) return 0;
  (void)reckon::ValidatePlan(plan.value(), Contracts());
  const std::string hash = reckon::PlanHash(plan.value());
  auto back = reckon::ParsePlanJson(reckon::PlanToJson(plan.value()));
  FUZZ_CHECK(back.has_value(), "PlanToJson wrote a plan that ParsePlanJson refuses");
  FUZZ_CHECK(reckon::PlanHash(back.value()) == hash, "a plan's hash changed through PlanToJson");
  return 0;
}
