#include "reckon/api/server/connection_slots.h"

#include <cassert>
#include <tuple>

namespace reckon::api {

boost::asio::ip::address SlotPeer(const boost::asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
  }
  return address;
}

ConnectionSlots::Admission ConnectionSlots::Admit(Id id, const boost::asio::ip::address& from,
                                                  Clock::time_point now) {
  assert(!holds(id));
  const boost::asio::ip::address peer = SlotPeer(from);
  Admission admission;
  // Decide both evictions before making either, so that a refusal changes nothing.
  std::optional<Id> for_peer;
  if (held_by(peer) >= limits_.max_per_peer) {
    for_peer = Victim(&peer);
    if (!for_peer) {
      admission.refused_by = Limit::kPerPeer;
      return admission;
    }
  }
  // Evicting one of the peer's own connections also makes room under the total.
  if (!for_peer && size() >= limits_.max_connections) {
    const std::optional<Id> any = Victim(nullptr);
    if (!any) {
      admission.refused_by = Limit::kTotal;
      return admission;
    }
    auto it = holders_.find(*any);
    admission.evicted.push_back({*any, it->second.phase, Limit::kTotal});
    Erase(it);
  }
  if (for_peer) {
    auto it = holders_.find(*for_peer);
    admission.evicted.push_back({*for_peer, it->second.phase, Limit::kPerPeer});
    Erase(it);
  }
  holders_.emplace(id, Holder{peer, Phase::kOpening, now});
  ++per_peer_[peer];
  admission.admitted = true;
  return admission;
}

void ConnectionSlots::Enter(Id id, Phase phase, Clock::time_point now) {
  auto it = holders_.find(id);
  if (it == holders_.end()) return;
  it->second.phase = phase;
  it->second.since = now;
}

void ConnectionSlots::Release(Id id) {
  auto it = holders_.find(id);
  if (it != holders_.end()) Erase(it);
}

std::size_t ConnectionSlots::held_by(const boost::asio::ip::address& peer) const {
  auto it = per_peer_.find(SlotPeer(peer));
  return it == per_peer_.end() ? 0 : it->second;
}

std::optional<ConnectionSlots::Id> ConnectionSlots::Victim(
    const boost::asio::ip::address* peer) const {
  // The smallest (-slots of its address, phase rank, since). A linear scan: it runs only when a
  // limit is reached, over at most max_connections holders.
  using Key = std::tuple<long long, int, Clock::time_point>;
  std::optional<Id> best;
  Key best_key;
  for (const auto& [id, holder] : holders_) {
    if (holder.phase == Phase::kBusy) continue;
    if (peer != nullptr && holder.peer != *peer) continue;
    const Key key{-static_cast<long long>(per_peer_.at(holder.peer)),
                  holder.phase == Phase::kOpening ? 0 : 1, holder.since};
    if (!best || key < best_key) {
      best = id;
      best_key = key;
    }
  }
  return best;
}

void ConnectionSlots::Erase(std::map<Id, Holder>::iterator it) {
  auto count = per_peer_.find(it->second.peer);
  if (--count->second == 0) per_peer_.erase(count);
  holders_.erase(it);
}

}  // namespace reckon::api
