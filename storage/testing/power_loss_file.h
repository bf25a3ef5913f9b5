// PowerLossFile: what one file holds on a simulated disk with a volatile write cache, as the
// power-loss VFS (storage/testing/power_loss_vfs.h) sees it. Test support only.
//
// The model: the file has a durable image (what the platter holds for certain) and the list of
// mutations issued since the last sync (writes, truncations, creation, deletion). Sync makes
// them all durable. At a power cut, the disk may have written any of the pending mutations
// before it lost power, so the file after the cut is the durable image plus a subset of them
// applied in issue order, where one write may be torn: a prefix of its 512-byte sectors
// reached the disk and the next sector holds either its old bytes or garbage. Bytes that no
// pending write covered never change (SQLite's SQLITE_IOCAP_POWERSAFE_OVERWRITE, which the unix
// VFS reports and SQLite relies on). The shapes of subset a cut may take are Cut's values.
//
// A file that did not exist is created by a pending kCreate; a deletion without a directory
// sync is a pending kDelete (with one, it is durable at once). Creations and deletions also
// become durable when the directory is synced (SyncMetadata); when that happens is the VFS's
// model (PowerLossVfs::Metadata).
//
// Not modelled: reordering across files (each file is cut on its own, which includes every
// cross-file order a barrier-respecting disk could produce, since SQLite never relies on order
// without a sync in between), lying fsyncs, bit rot, and metadata other than existence and
// size.
//
// A value type; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace reckon::storage {

inline constexpr std::int64_t kPowerLossSector = 512;

class PowerLossFile {
 public:
  enum class Cut {
    kKeepAll,       // all of them did: the cache was written back in time
    kDropAll,       // none of the pending mutations reached the disk
    kPrefixTorn,    // the first k did, in order, and the (k+1)th is torn (old bytes after it)
    kSubsetTorn,    // any subset did; one kept write is torn, its torn sector full of garbage
  };
  static constexpr int kCuts = 4;

  // A file that exists durably with `durable` as content, or (nullopt) does not exist.
  explicit PowerLossFile(std::optional<std::string> durable) : durable_(std::move(durable)) {}

  void Create();  // the file did not exist and is created (empty)
  void Write(std::int64_t offset, std::string_view bytes);
  void Truncate(std::int64_t size);
  // `dir_synced`: the directory was fsynced after the unlink, so the deletion is durable.
  void Delete(bool dir_synced);
  void Sync();  // every pending mutation becomes durable
  // The directory was synced: every earlier creation and deletion of this file is durable
  // (its writes and truncations stay pending).
  void SyncMetadata();

  // The file as it is after a power cut of shape `cut` (nullopt: it does not exist). Draws
  // its choices from `rng`. Does not change this object; call Reboot to adopt an image.
  std::optional<std::string> ImageAfterCut(Cut cut, std::mt19937_64& rng) const;
  // The disk came back holding `image`: it is durable now, nothing is pending.
  void Reboot(std::optional<std::string> image);

  std::size_t pending() const { return pending_.size(); }
  // Whether the file exists for a reader now (cheaper than Live()).
  bool Exists() const;
  // What a reader sees now: the durable image with every pending mutation applied.
  std::optional<std::string> Live() const;

 private:
  struct Mutation {
    enum Kind { kCreate, kWrite, kTruncate, kDelete } kind;
    std::int64_t offset = 0;  // kWrite: where; kTruncate: the new size
    std::string bytes;        // kWrite only
  };
  static void Apply(const Mutation& m, std::optional<std::string>& image);
  // Applies the first `sectors` sectors of write `m` (sector boundaries are absolute offsets),
  // then, if `garbage`, fills the next sector's part of the write with random bytes.
  static void ApplyTorn(const Mutation& m, std::int64_t sectors, bool garbage,
                        std::mt19937_64& rng, std::optional<std::string>& image);

  std::optional<std::string> durable_;
  std::vector<Mutation> pending_;
};

}  // namespace reckon::storage
