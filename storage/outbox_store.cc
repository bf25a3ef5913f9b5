#include "reckon/storage/outbox_store.h"

namespace reckon::storage {

std::string OutboxSealContext(std::string_view message_id) {
  std::string out = "reckon.outbox.v1";
  out += std::to_string(message_id.size());
  out += ':';
  out += message_id;
  return out;
}

}  // namespace reckon::storage
