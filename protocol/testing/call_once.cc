#include "reckon/protocol/testing/call_once.h"

#include "reckon/protocol/credentials.h"

namespace reckon::testing {

Result<Reply> CallOnceWithTokenFile(const std::string& address, const std::string& token_file,
                                    std::unique_ptr<capnp::MallocMessageBuilder> request) {
  ClientOptions options;
  RECKON_TRY(options.token, api::ReadTokenFile(token_file));
  return CallOnce(address, std::move(options), std::move(request));
}

}  // namespace reckon::testing
