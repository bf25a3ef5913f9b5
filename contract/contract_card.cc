#include "reckon/contract/contract_card.h"

#include <string_view>

#include "reckon/contract/contract_card_answers.h"
#include "reckon/contract/contract_json.h"

namespace reckon {
namespace {

constexpr std::size_t kWidth = 100;

// Appends `text` word-wrapped: the first line starts with `first`, the others with `rest`.
void Wrap(std::string_view text, std::string_view first, std::string_view rest, std::string& out) {
  std::string line(first);
  std::size_t line_start_size = line.size();
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    if (line.size() > line_start_size && line.size() + 1 + word.size() > kWidth) {
      out += line + "\n";
      line = std::string(rest);
      line_start_size = line.size();
    }
    if (line.size() > line_start_size) line += ' ';
    line += word;
    pos = end + 1;
  }
  out += line + "\n";
}

}  // namespace

boost::json::value ContractCardJson(const ToolContract& contract) {
  boost::json::object card{{"tool", contract.name},
                           {"side_effect", SideEffectName(contract.side_effect)}};
  if (auto hash = ContractHash(contract)) card["contract_hash"] = hash.value();
  if (auto valid = ValidateContract(contract); !valid) card["problems"] = valid.error().message();
  card["questions"] = CardQuestions(contract);
  return card;
}

std::string RenderContractCard(const ToolContract& contract) {
  const boost::json::value card = ContractCardJson(contract);
  const boost::json::object& o = card.get_object();
  std::string out = "Contract card: " + contract.name + " (" +
                    std::string(SideEffectName(contract.side_effect)) + ")\n";
  if (const auto* hash = o.if_contains("contract_hash")) {
    out += "contract hash " + std::string(hash->get_string()) + "\n";
  }
  if (const auto* problems = o.if_contains("problems")) {
    Wrap("REFUSED at registration: " + std::string(problems->get_string()), "!! ", "   ", out);
  }
  for (const boost::json::value& q : o.at("questions").get_array()) {
    const auto& question = q.get_object();
    out += "\n" + std::to_string(question.at("number").to_number<int>()) + ". " +
           std::string(question.at("question").get_string()) + "\n";
    const auto& answer = question.at("answer").get_array();
    for (const boost::json::value& sentence : answer) {
      std::string_view text = sentence.get_string();
      if (answer.size() == 1) {
        Wrap(text, "   ", "   ", out);
      } else {
        Wrap(text, "   - ", "     ", out);
      }
    }
  }
  return out;
}

}  // namespace reckon
