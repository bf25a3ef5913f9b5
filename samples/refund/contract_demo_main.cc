// refund-contract-demo: registers the refund sample's tool contracts, prints their contract
// cards, and shows what the intent hash (what an approval is bound to) does and does
// not notice in a refund's input. With --json it prints the contracts as published in
// samples/refund/refund_contracts.json instead.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <iostream>
#include <string>

#include "reckon/contract/contract_card.h"
#include "reckon/contract/contract_registry.h"
#include "samples/refund/refund_contracts.h"

namespace {

using reckon::RegisteredContract;

void Rule(const std::string& title) {
  std::string line = "== " + title + " ";
  line.resize(100, '=');
  std::cout << "\n" << line << "\n";
}

// The input as it may be shown: secret fields masked (top-level ones; enough for the sample).
std::string Shown(const boost::json::value& input, const RegisteredContract& tool) {
  boost::json::value copy = input;
  for (const std::string& field : tool.contract().secret_fields) {
    if (auto* object = copy.if_object(); object != nullptr && object->contains(field)) {
      (*object)[field] = "***";
    }
  }
  return boost::json::serialize(copy);
}

// Prints one input's intent hash and whether it needs approval; returns the hash.
std::string Show(const std::string& label, const boost::json::value& input,
                 const RegisteredContract& tool) {
  auto hash = tool.IntentHashOf(input);
  auto approval = tool.ApprovalRequiredFor(input);
  if (!hash || !approval) {
    std::cout << "  " << label << ": refused: "
              << (hash ? approval.error() : hash.error()).ToString() << "\n";
    return "";
  }
  std::cout << "  " << label << "\n"
            << "    input        " << Shown(input, tool) << "\n"
            << "    intent hash  " << hash.value() << "\n"
            << "    approval     " << (approval.value() ? "required" : "not required") << "\n";
  return hash.value();
}

void Compare(const std::string& a, const std::string& b, const std::string& why) {
  std::cout << "  -> the hash " << (a == b ? "is UNCHANGED" : "CHANGES") << ": " << why << "\n\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--json") {
    std::cout << reckon::refund::RefundContractsJson();
    return 0;
  }
  reckon::ContractRegistry registry;
  if (auto registered = reckon::refund::RegisterRefundContracts(registry); !registered) {
    std::cerr << "refund-contract-demo: " << registered.error().ToString() << "\n";
    return 1;
  }

  Rule("Registered tool contracts");
  for (const reckon::ToolContract* contract : registry.All()) {
    std::cout << "  " << contract->name << "  (" << reckon::SideEffectName(contract->side_effect)
              << ", contract hash " << registry.FindRegistered(contract->name)->hash().substr(0, 16)
              << "...)\n";
  }
  for (const reckon::ToolContract* contract : registry.All()) {
    Rule("Contract card: " + contract->name);
    std::cout << reckon::RenderContractCard(*contract);
  }

  Rule("Intent hash of a send_refund input");
  std::cout << "  SHA-256 over the RFC 8785 canonical JSON of the validated input, with the\n"
               "  secret field card_token left out. An approval grant is bound to this hash.\n\n";
  const RegisteredContract& refund = *registry.FindRegistered("send_refund");
  auto input = boost::json::parse(
      R"({"payment_id":"pay-0","amount_cents":2500,"reason":"damaged","card_token":"tok_secret"})");
  std::string base = Show("the example refund", input, refund);

  boost::json::value other_card = input;
  other_card.as_object()["card_token"] = "tok_other_card";
  std::string card_hash =
      Show("the same refund, card_token tok_secret -> tok_other_card", other_card, refund);
  Compare(base, card_hash, "card_token is a secret field, left out of the intent");

  boost::json::value reordered = boost::json::parse(R"({"reason":"damaged","amount_cents":2.5e3,
                                                        "payment_id":"pay-0",
                                                        "card_token":"tok_secret"})");
  std::string reordered_hash = Show("the same refund, members reordered, 2.5e3 cents", reordered,
                                    refund);
  Compare(base, reordered_hash, "same meaning, different spelling (canonical JSON)");

  boost::json::value more = input;
  more.as_object()["amount_cents"] = 2600;
  std::string more_hash = Show("amount_cents 2600 instead of 2500", more, refund);
  Compare(base, more_hash,
          "amount_cents is part of the intent; a grant for 2500 does not cover 2600");

  boost::json::value large = input;
  large.as_object()["amount_cents"] = 25000;
  Show("amount_cents 25000 (over the 10000 approval threshold)", large, refund);
  std::cout << "\n";

  boost::json::value bad = input;
  bad.as_object()["amount_cents"] = "2500";
  Show("amount_cents as a string", bad, refund);
  return 0;
}
