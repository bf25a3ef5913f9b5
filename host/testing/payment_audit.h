// The audit the engine's crash tests end with (power cuts, PostgreSQL kills): every run made
// one payment, and at the end each run completed with exactly one committed operation whose
// payment took effect exactly once at the provider, and the provider holds no other payment.
// A blind retry after a lost outcome shows as a second effect at a provider that does not
// deduplicate. Reads the journal through the Journal interface; not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "reckon/storage/journal.h"
#include "reckon/testkit/fake_provider.h"

namespace reckon::testing {

// The first violation, or "" when every run of `workflow_ids` passes.
std::string CheckEachPaymentOnce(storage::Journal& journal,
                                 const std::vector<std::string>& workflow_ids,
                                 const testkit::FakeProvider& provider);

// Runs of `workflow_ids` with a payment the provider made whose outcome the journal does not
// hold (a crash took it): the next life must learn it by a lookup, not by paying again.
int CountOutcomesLost(storage::Journal& journal, const std::vector<std::string>& workflow_ids,
                      const testkit::FakeProvider& provider);

}  // namespace reckon::testing
