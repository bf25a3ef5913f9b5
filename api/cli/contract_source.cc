#include "reckon/api/cli/contract_source.h"

#include <boost/json.hpp>

#include <fstream>
#include <sstream>

#include "reckon/protocol/wire_convert.h"
#include "reckon/base/jcs.h"
#include "reckon/contract/contract_json.h"

namespace reckon::cli {

namespace json = boost::json;
namespace wire = api::wire;

void AddContractSourceFlag(CLI::App* command, ContractSource& source) {
  command
      ->add_option("--contracts", source.file,
                   "Check against the tool contracts in FILE (a JSON array, as `reckon "
                   "contracts --json` prints them) instead of the server's")
      ->type_name("FILE");
}

Result<ContractRegistry> LoadContractsFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(Errc::kInvalidArgument, "cannot read contracts file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  auto parsed = ParseStrictJson(text.str());
  if (!parsed) return parsed.error().WithContext(path);
  // A tools file (tools/http/http_tools_file.h) holds its contracts as tools[i].contract.
  const json::value* list = &parsed.value();
  if (list->is_object() && list->as_object().contains("tools")) list = &list->as_object().at("tools");
  if (!list->is_array()) {
    return Err(Errc::kInvalidArgument,
               path + ": expected a JSON array of tool contracts, as `reckon contracts --json` "
                      "prints them, or a tools file");
  }
  ContractRegistry registry;
  const json::array& entries = list->as_array();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string where = path + ": contract [" + std::to_string(i) + "]";
    // `reckon contracts --json` wraps each contract: {"name", "hash", "contract": {...}}.
    const json::value* entry = &entries[i];
    if (entry->is_object()) {
      if (const json::value* inner = entry->as_object().if_contains("contract");
          inner != nullptr && inner->is_object()) {
        entry = inner;
      }
    }
    auto contract = ContractFromJson(*entry);
    if (!contract) return contract.error().WithContext(where);
    if (auto registered = registry.Register(std::move(contract).value()); !registered) {
      return registered.error().WithContext(where);
    }
  }
  return registry;
}

Result<ContractRegistry> LoadContracts(const ContractSource& source, const RemoteFlags& remote) {
  if (!source.file.empty()) return LoadContractsFile(source.file);
  auto request = NewRequest();
  request->getRoot<wire::Request>().initMethod().setListContracts();
  RECKON_TRY(api::Reply reply, CallServer(remote, std::move(request)));
  ContractRegistry registry;
  for (auto c : reply.get().getResult().getContracts()) {
    RECKON_TRY(json::value value, api::JsonFromWire(c.getContractJson(), "contract"));
    RECKON_TRY(ToolContract contract, ContractFromJson(value));
    RECKON_TRY(registry.Register(std::move(contract)));
  }
  return registry;
}

}  // namespace reckon::cli
