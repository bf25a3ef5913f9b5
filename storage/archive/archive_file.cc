#include "reckon/storage/archive/archive_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "reckon/storage/event_codec.h"

namespace reckon::storage {
namespace {

namespace json = boost::json;

constexpr char kFormatName[] = "reckon-archive";
constexpr std::size_t kChunk = 64 * 1024;

Error IoError(const std::string& what, const std::string& path) {
  return Err(Errc::kUnavailable, what + " '" + path + "': " + std::strerror(errno));
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

Result<std::string> Unhex(std::string_view hex) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return Err(Errc::kCorruption, "an event's hex has an odd length");
  std::string out(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return Err(Errc::kCorruption, "an event's hex has a non-hex digit");
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

Result<void> SyncDirectoryOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return IoError("cannot open the directory", dir);
  const int synced = ::fsync(fd);
  ::close(fd);
  if (synced != 0) return IoError("cannot fsync the directory", dir);
  return Ok();
}

json::object RunJson(const ArchivedRun& run) {
  json::array events;
  for (const Event& event : run.events) {
    events.push_back(json::object{{"seq", event.seq},
                                  {"recorded_at_us", event.recorded_at_us},
                                  {"type", EventTypeName(event.body)},
                                  {"body", Hex(EncodeEventBody(event.body))}});
  }
  const RunRow& r = run.row;
  json::object row{{"workflow_id", r.ref.workflow_id}, {"run_id", r.ref.run_id},
                   {"workflow_type", r.workflow_type}, {"status", RunStatusName(r.status)},
                   {"next_seq", r.next_seq},           {"created_at_us", r.created_at_us},
                   {"updated_at_us", r.updated_at_us}};
  return json::object{{"run", std::move(row)}, {"events", std::move(events)}};
}

}  // namespace

// --- writing ----------------------------------------------------------------------------------

ArchiveWriter::ArchiveWriter(std::string path, int fd)
    : path_(std::move(path)), partial_(path_ + ".partial"), fd_(fd) {}

Result<std::unique_ptr<ArchiveWriter>> ArchiveWriter::Create(const std::string& path,
                                                             const ArchiveHeader& header) {
  if (std::filesystem::exists(path)) {
    return Err(Errc::kAlreadyExists, "archive '" + path + "' exists; archives are never "
                                     "overwritten: name another file");
  }
  const std::string partial = path + ".partial";
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return IoError("cannot create the archive", partial);
  std::unique_ptr<ArchiveWriter> writer(new ArchiveWriter(path, fd));
  // windowBits 15 + 16: a gzip wrapper, so `zcat` reads the file too.
  if (deflateInit2(&writer->zs_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return Err(Errc::kInternal, "zlib could not start a gzip stream");
  }
  json::object line{{"format", kFormatName},
                    {"version", header.version},
                    {"created_at_us", header.created_at_us},
                    {"journal", header.journal},
                    {"updated_before_us", header.updated_before_us}};
  RECKON_TRY(writer->WriteLine(json::serialize(line)));
  return writer;
}

ArchiveWriter::~ArchiveWriter() {
  deflateEnd(&zs_);
  if (fd_ >= 0) ::close(fd_);
  if (!finished_) std::filesystem::remove(partial_);
}

Result<void> ArchiveWriter::Add(const ArchivedRun& run) {
  RECKON_TRY(WriteLine(json::serialize(RunJson(run))));
  ++runs_;
  return Ok();
}

Result<void> ArchiveWriter::WriteLine(const std::string& line) {
  std::string text = line + "\n";
  zs_.next_in = reinterpret_cast<Bytef*>(text.data());
  zs_.avail_in = static_cast<uInt>(text.size());
  return Deflate(Z_NO_FLUSH);
}

Result<void> ArchiveWriter::Deflate(int flush) {
  unsigned char buffer[kChunk];
  int rc = Z_OK;
  do {
    zs_.next_out = buffer;
    zs_.avail_out = kChunk;
    rc = deflate(&zs_, flush);
    if (rc == Z_STREAM_ERROR) return Err(Errc::kInternal, "zlib refused the archive stream");
    out_.append(reinterpret_cast<char*>(buffer), kChunk - zs_.avail_out);
  } while (zs_.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  if (out_.size() < kChunk && flush != Z_FINISH) return Ok();
  std::size_t done = 0;
  while (done < out_.size()) {
    const ssize_t n = ::write(fd_, out_.data() + done, out_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write the archive", partial_);
    }
    done += static_cast<std::size_t>(n);
  }
  out_.clear();
  return Ok();
}

Result<void> ArchiveWriter::Finish() {
  json::object end{{"end", true}, {"runs", runs_}};
  RECKON_TRY(WriteLine(json::serialize(end)));
  RECKON_TRY(Deflate(Z_FINISH));
  if (::fsync(fd_) != 0) return IoError("cannot fsync the archive", partial_);
  ::close(fd_);
  fd_ = -1;
  if (std::filesystem::exists(path_)) {
    return Err(Errc::kAlreadyExists, "archive '" + path_ + "' appeared while it was written");
  }
  if (::rename(partial_.c_str(), path_.c_str()) != 0) {
    return IoError("cannot rename the archive to", path_);
  }
  finished_ = true;
  return SyncDirectoryOf(path_);
}

// --- reading ----------------------------------------------------------------------------------

namespace {

Result<std::string> Gunzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    if (!std::filesystem::exists(path)) {
      return Err(Errc::kNotFound, "archive '" + path + "' does not exist");
    }
    return IoError("cannot open the archive", path);
  }
  std::string text;
  char buffer[kChunk];
  for (;;) {
    const int n = gzread(file, buffer, sizeof buffer);
    if (n < 0) {
      int code = 0;
      std::string why = gzerror(file, &code);
      gzclose(file);
      return Err(Errc::kCorruption, "archive '" + path + "' is damaged or incomplete: " + why);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  // gzclose_r reports a bad trailer (CRC or length) as Z_DATA_ERROR, a truncated one as
  // Z_BUF_ERROR.
  if (const int closed = gzclose_r(file); closed != Z_OK) {
    return Err(Errc::kCorruption, "archive '" + path + "' is incomplete or damaged (gzip "
                                  "stream did not end cleanly); archive the runs again");
  }
  return text;
}

Result<ArchivedRun> ParseRun(const json::object& line, EventDecoder& decoder) {
  ArchivedRun run;
  const json::object& row = line.at("run").as_object();
  run.row.ref.workflow_id = json::value_to<std::string>(row.at("workflow_id"));
  run.row.ref.run_id = json::value_to<std::string>(row.at("run_id"));
  run.row.workflow_type = json::value_to<std::string>(row.at("workflow_type"));
  RECKON_TRY(run.row.status, ParseRunStatus(row.at("status").as_string()));
  run.row.next_seq = row.at("next_seq").to_number<std::int64_t>();
  run.row.created_at_us = row.at("created_at_us").to_number<std::int64_t>();
  run.row.updated_at_us = row.at("updated_at_us").to_number<std::int64_t>();
  for (const json::value& item : line.at("events").as_array()) {
    const json::object& e = item.as_object();
    RECKON_TRY(std::string bytes, Unhex(e.at("body").as_string()));
    RECKON_TRY(EventBody body, decoder.Decode(std::as_bytes(std::span(bytes))));
    Event event;
    event.seq = e.at("seq").to_number<std::int64_t>();
    event.recorded_at_us = e.at("recorded_at_us").to_number<std::int64_t>();
    event.body = std::move(body);
    run.events.push_back(std::move(event));
  }
  return run;
}

}  // namespace

Result<ArchiveContents> ReadArchive(const std::string& path) {
  RECKON_TRY(std::string text, Gunzip(path));
  ArchiveContents contents;
  EventDecoder decoder;
  bool header = false, ended = false;
  std::size_t start = 0;
  int line_no = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    ++line_no;
    const std::string where = "archive '" + path + "' line " + std::to_string(line_no);
    if (ended) return Err(Errc::kCorruption, where + " follows the end line");
    boost::system::error_code ec;
    json::value parsed = json::parse(line, ec);
    if (ec || !parsed.is_object()) return Err(Errc::kCorruption, where + " is not a JSON object");
    const json::object& object = parsed.as_object();
    try {
      if (!header) {
        if (!object.contains("format") || object.at("format").as_string() != kFormatName) {
          return Err(Errc::kCorruption, "'" + path + "' is not a reckon archive");
        }
        contents.header.version = static_cast<int>(object.at("version").to_number<std::int64_t>());
        if (contents.header.version > kArchiveFormatVersion) {
          return Err(Errc::kFailedPrecondition,
                     "archive '" + path + "' has format version " +
                         std::to_string(contents.header.version) + "; this release reads up to " +
                         std::to_string(kArchiveFormatVersion) + ": use a newer reckon");
        }
        contents.header.created_at_us = object.at("created_at_us").to_number<std::int64_t>();
        contents.header.journal = json::value_to<std::string>(object.at("journal"));
        contents.header.updated_before_us =
            object.at("updated_before_us").to_number<std::int64_t>();
        header = true;
      } else if (object.contains("end")) {
        const auto runs = object.at("runs").to_number<std::int64_t>();
        if (runs != static_cast<std::int64_t>(contents.runs.size())) {
          return Err(Errc::kCorruption, where + " counts " + std::to_string(runs) +
                                            " runs, but the file holds " +
                                            std::to_string(contents.runs.size()));
        }
        ended = true;
      } else {
        auto run = ParseRun(object, decoder);
        if (!run) return run.error().WithContext(where);
        contents.runs.push_back(std::move(run).value());
      }
    } catch (const std::exception& e) {
      // boost::json's accessors throw on a missing field or a wrong type: bad input.
      return Err(Errc::kCorruption, where + " lacks a field or has one of the wrong type (" +
                                        e.what() + ")");
    }
  }
  if (!ended) {
    return Err(Errc::kCorruption, "archive '" + path + "' has no end line: it is incomplete");
  }
  return contents;
}

}  // namespace reckon::storage
