// ConnectionSlots: who holds the connection slots of one listening port, and whom to close to
// make room for a newcomer. Server (the protocol port, server.h) and HttpServer (the console's
// port, http/http_server.h) each keep one, so both ports share their slots by the same rule.
//
// The rule. A port has `max_connections` slots, and one peer address holds at most
// `max_per_peer` of them. A newcomer that would pass either limit takes the slot of a
// connection in that limit's scope (the peer's own connections, or all) that works for no one
// (not busy), chosen by, in order:
//
//   1. its address holds the most slots (so the address that takes the most gives first, and
//      one that holds a few never loses them to a flood from another);
//   2. it is still opening, has not sent a whole request yet (a silent or slow opener, a TLS
//      handshake that never ends, a request sent a byte at a time), before an idle one,
//      between requests;
//   3. the oldest: the earliest accept (opening), the longest idle (idle).
//
// Only when every connection in the scope is busy (a request being handled or, on the HTTP
// port, its reply being written) is the newcomer refused. So peers that open connections and
// then send nothing, or trickle, cannot keep another address out, even by reconnecting as fast
// as they are closed; a peer that keeps requests in flight holds at most max_per_peer slots.
// (The deadlines of each port then close what is left opening or idle too long on its own.)
//
// A peer is an IP address (an IPv4-mapped IPv6 address counts as its IPv4 address). Peers
// behind one NAT share its address, and so its max_per_peer.
//
// Plain bookkeeping: no clock, no I/O; the server closes what Admit() names. Not thread-safe:
// used on the server's executor.
#pragma once

#include <boost/asio/ip/address.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace reckon::api {

class ConnectionSlots {
 public:
  using Id = std::uint64_t;
  using Clock = std::chrono::steady_clock;

  struct Limits {
    std::size_t max_connections = 1;  // >= 1
    std::size_t max_per_peer = 1;     // >= 1; over max_connections it is max_connections
  };
  enum class Phase {
    kOpening,  // accepted; no whole request received yet
    kIdle,     // between requests
    kBusy,     // a request being handled, or its reply being written
  };
  // Which limit a refusal or an eviction was for.
  enum class Limit { kPerPeer, kTotal };

  explicit ConnectionSlots(Limits limits) : limits_(limits) {}

  struct Evicted {
    Id id;
    Phase phase;  // kOpening or kIdle
    Limit limit;  // which limit the newcomer would have passed
  };
  struct Admission {
    bool admitted = false;
    std::optional<Limit> refused_by;  // when not admitted: the limit every holder was busy under
    std::vector<Evicted> evicted;     // to close now; their slots are already free
  };
  // A newcomer `id` (unused so far) from `peer`, accepted at `now`. Admitted: it holds a slot in
  // phase kOpening. Refused: nothing changed (nothing is evicted for a newcomer refused).
  Admission Admit(Id id, const boost::asio::ip::address& peer, Clock::time_point now);
  // `id` entered `phase` at `now` (kIdle counts its idleness from `now`). Nothing for an id that
  // holds no slot (evicted, or released).
  void Enter(Id id, Phase phase, Clock::time_point now);
  // `id` is gone; its slot is free. Nothing for an id that holds no slot.
  void Release(Id id);

  bool holds(Id id) const { return holders_.count(id) != 0; }
  std::size_t size() const { return holders_.size(); }
  std::size_t held_by(const boost::asio::ip::address& peer) const;
  const Limits& limits() const { return limits_; }

 private:
  struct Holder {
    boost::asio::ip::address peer;
    Phase phase = Phase::kOpening;
    Clock::time_point since;  // accepted (opening), idle since (idle)
  };
  // The one to evict within `peer`'s connections (or all, when null), by the rule above.
  std::optional<Id> Victim(const boost::asio::ip::address* peer) const;
  void Erase(std::map<Id, Holder>::iterator it);

  Limits limits_;
  std::map<Id, Holder> holders_;
  std::map<boost::asio::ip::address, std::size_t> per_peer_;
};

// The peer of `address` as ConnectionSlots counts it (IPv4-mapped IPv6 as IPv4).
boost::asio::ip::address SlotPeer(const boost::asio::ip::address& address);

}  // namespace reckon::api
