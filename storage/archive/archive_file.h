// Archive files: finished runs taken out of a journal (storage/archive/archiver.h), kept as a
// gzip-compressed stream of JSON lines. The format is docs/JOURNAL_FORMAT.md, "Archive files":
// a header line naming the format and its version, one line per run (its row and its events,
// each event the Cap'n Proto bytes of EncodeEventBody in hex), and an end line with the count.
// A file without its end line, or whose gzip trailer does not check, is refused as incomplete.
//
// ArchiveWriter writes "<path>.partial" and, at Finish(), fsyncs it, renames it to <path> and
// fsyncs the directory: a file at <path> is complete and durable, whatever crashed meanwhile.
// Plain value types and single-owner objects; not thread-safe.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"
#include "reckon/storage/rows.h"

namespace reckon::storage {

inline constexpr int kArchiveFormatVersion = 1;

struct ArchiveHeader {
  int version = kArchiveFormatVersion;
  std::int64_t created_at_us = 0;
  std::string journal;                 // where the runs came from (a path; no password)
  std::int64_t updated_before_us = 0;  // the cut: runs finished before it
};

struct ArchivedRun {
  RunRow row;  // run_pk is the source journal's and means nothing elsewhere
  std::vector<Event> events;
};

class ArchiveWriter {
 public:
  // Creates "<path>.partial" (replacing a leftover of a crash) and writes the header. Errors:
  // kAlreadyExists when <path> exists (archives are never overwritten), kUnavailable for I/O.
  static Result<std::unique_ptr<ArchiveWriter>> Create(const std::string& path,
                                                       const ArchiveHeader& header);
  ~ArchiveWriter();  // without Finish(): removes the partial file
  ArchiveWriter(const ArchiveWriter&) = delete;
  ArchiveWriter& operator=(const ArchiveWriter&) = delete;

  Result<void> Add(const ArchivedRun& run);
  // Writes the end line, flushes the gzip stream, fsyncs, renames to the final path and
  // fsyncs its directory. Only after it returns Ok may the runs leave the journal.
  Result<void> Finish();
  const std::string& path() const { return path_; }
  int runs() const { return runs_; }

 private:
  ArchiveWriter(std::string path, int fd);
  Result<void> WriteLine(const std::string& line);
  Result<void> Deflate(int flush);

  std::string path_;
  std::string partial_;
  int fd_ = -1;
  z_stream zs_{};
  bool finished_ = false;
  int runs_ = 0;
  std::string out_;  // compressed bytes not yet written
};

struct ArchiveContents {
  ArchiveHeader header;
  std::vector<ArchivedRun> runs;
};

// Reads a whole archive back. Errors: kNotFound (no file), kCorruption (not gzip, a bad line,
// an event that does not decode, no end line or a wrong count: an incomplete file),
// kFailedPrecondition (a version newer than this release reads).
Result<ArchiveContents> ReadArchive(const std::string& path);

}  // namespace reckon::storage
