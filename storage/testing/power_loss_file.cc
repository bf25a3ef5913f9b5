#include "reckon/storage/testing/power_loss_file.h"

#include <algorithm>

namespace reckon::storage {
namespace {

// Sectors a write of `size` bytes at `offset` touches (boundaries at absolute offsets).
std::int64_t SectorsTouched(std::int64_t offset, std::int64_t size) {
  if (size <= 0) return 0;
  return (offset + size - 1) / kPowerLossSector - offset / kPowerLossSector + 1;
}

// Where the first `sectors` sectors of a write at `offset` of `size` bytes end.
std::int64_t EndOfSectors(std::int64_t offset, std::int64_t size, std::int64_t sectors) {
  if (sectors <= 0) return offset;
  return std::min(offset + size, (offset / kPowerLossSector + sectors) * kPowerLossSector);
}

void Overwrite(std::string& image, std::int64_t offset, std::string_view bytes) {
  const auto end = static_cast<std::size_t>(offset) + bytes.size();
  if (image.size() < end) image.resize(end, '\0');
  std::copy(bytes.begin(), bytes.end(), image.begin() + offset);
}

}  // namespace

void PowerLossFile::Create() { pending_.push_back({Mutation::kCreate, 0, {}}); }

void PowerLossFile::Write(std::int64_t offset, std::string_view bytes) {
  if (bytes.empty()) return;
  pending_.push_back({Mutation::kWrite, offset, std::string(bytes)});
}

void PowerLossFile::Truncate(std::int64_t size) {
  pending_.push_back({Mutation::kTruncate, size, {}});
}

void PowerLossFile::Delete(bool dir_synced) {
  if (dir_synced) {
    durable_.reset();
    pending_.clear();
    return;
  }
  pending_.push_back({Mutation::kDelete, 0, {}});
}

void PowerLossFile::Sync() {
  for (const Mutation& m : pending_) Apply(m, durable_);
  pending_.clear();
}

void PowerLossFile::SyncMetadata() {
  // Everything up to the last creation or deletion is settled by it: earlier writes went to
  // an inode that is gone (a deletion) or to a file that did not exist (a creation).
  std::size_t settled = 0;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const Mutation::Kind kind = pending_[i].kind;
    if (kind == Mutation::kDelete) {
      durable_.reset();
      settled = i + 1;
    } else if (kind == Mutation::kCreate && !durable_) {
      durable_.emplace();
      settled = i + 1;
    }
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(settled));
}

void PowerLossFile::Reboot(std::optional<std::string> image) {
  durable_ = std::move(image);
  pending_.clear();
}

bool PowerLossFile::Exists() const {
  for (auto m = pending_.rbegin(); m != pending_.rend(); ++m) {
    if (m->kind == Mutation::kCreate) return true;
    if (m->kind == Mutation::kDelete) return false;
  }
  return durable_.has_value();
}

std::optional<std::string> PowerLossFile::Live() const {
  std::optional<std::string> image = durable_;
  for (const Mutation& m : pending_) Apply(m, image);
  return image;
}

void PowerLossFile::Apply(const Mutation& m, std::optional<std::string>& image) {
  switch (m.kind) {
    case Mutation::kCreate:
      if (!image) image.emplace();
      return;
    case Mutation::kWrite:
      if (image) Overwrite(*image, m.offset, m.bytes);  // a write to an unlinked file is lost
      return;
    case Mutation::kTruncate:
      if (image) image->resize(static_cast<std::size_t>(m.offset), '\0');
      return;
    case Mutation::kDelete:
      image.reset();
      return;
  }
}

void PowerLossFile::ApplyTorn(const Mutation& m, std::int64_t sectors, bool garbage,
                              std::mt19937_64& rng, std::optional<std::string>& image) {
  if (!image) return;
  const auto size = static_cast<std::int64_t>(m.bytes.size());
  const std::int64_t kept = EndOfSectors(m.offset, size, sectors) - m.offset;
  Overwrite(*image, m.offset, std::string_view(m.bytes).substr(0, kept));
  if (!garbage) return;
  const std::int64_t end = EndOfSectors(m.offset, size, sectors + 1);
  std::string noise(static_cast<std::size_t>(end - m.offset - kept), '\0');
  for (char& c : noise) c = static_cast<char>(rng() & 0xff);
  Overwrite(*image, m.offset + kept, noise);
}

std::optional<std::string> PowerLossFile::ImageAfterCut(Cut cut, std::mt19937_64& rng) const {
  std::optional<std::string> image = durable_;
  const std::size_t n = pending_.size();
  auto sectors_kept = [&](const Mutation& m) {
    const auto size = static_cast<std::int64_t>(m.bytes.size());
    const std::int64_t touched = SectorsTouched(m.offset, size);
    return std::uniform_int_distribution<std::int64_t>(0, touched - 1)(rng);
  };
  switch (cut) {
    case Cut::kKeepAll:
      return Live();
    case Cut::kDropAll:
      return image;
    case Cut::kPrefixTorn: {
      const std::size_t k = std::uniform_int_distribution<std::size_t>(0, n)(rng);
      for (std::size_t i = 0; i < k; ++i) Apply(pending_[i], image);
      if (k < n && pending_[k].kind == Mutation::kWrite) {
        ApplyTorn(pending_[k], sectors_kept(pending_[k]), false, rng, image);
      }
      return image;
    }
    case Cut::kSubsetTorn: {
      std::vector<std::size_t> kept_writes;
      std::vector<bool> kept(n);
      for (std::size_t i = 0; i < n; ++i) {
        kept[i] = (rng() & 1) != 0;
        if (kept[i] && pending_[i].kind == Mutation::kWrite) kept_writes.push_back(i);
      }
      std::size_t torn = n;  // none
      if (!kept_writes.empty()) {
        std::uniform_int_distribution<std::size_t> pick(0, kept_writes.size() - 1);
        torn = kept_writes[pick(rng)];
      }
      for (std::size_t i = 0; i < n; ++i) {
        if (!kept[i]) continue;
        if (i == torn) {
          ApplyTorn(pending_[i], sectors_kept(pending_[i]), true, rng, image);
        } else {
          Apply(pending_[i], image);
        }
      }
      return image;
    }
  }
  return image;
}

}  // namespace reckon::storage
