#include "samples/payments_provider/faults.h"

namespace reckon::samples::provider {

double FaultPlan::Uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

Faults FaultPlan::Next() {
  double fail = Uniform();
  double drop = Uniform();
  return Faults{fail < rates_.fail_before_commit, drop < rates_.drop_reply};
}

}  // namespace reckon::samples::provider
