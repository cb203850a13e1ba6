// Event log file writer and reader.
#include "tactus/core/event_log.hpp"

#include <cerrno>
#include <cstring>

namespace tactus {

Result<EventLog> readEventLog(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return fail(ErrorCode::kIo, path + ": cannot open: " + std::strerror(errno));
  EventLog log;
  if (std::fread(&log.header, sizeof log.header, 1, f) != 1) {
    std::fclose(f);
    return fail(ErrorCode::kParse, path + ": too short for an event log header");
  }
  if (std::memcmp(log.header.magic, kEventLogMagic, sizeof kEventLogMagic) != 0) {
    std::fclose(f);
    return fail(ErrorCode::kParse, path + ": not a tactus event log (bad magic)");
  }
  if (log.header.version < kEventLogOldestVersion || log.header.version > kEventLogVersion) {
    std::fclose(f);
    return fail(ErrorCode::kIncompatible, path + ": event log version " + std::to_string(log.header.version) +
                                              ", this build reads versions " + std::to_string(kEventLogOldestVersion) +
                                              " to " + std::to_string(kEventLogVersion));
  }
  if (log.header.headerSize != sizeof(EventLogHeader) || log.header.recordSize != sizeof(EventRecord)) {
    std::fclose(f);
    return fail(ErrorCode::kParse, path + ": unexpected header or record size");
  }
  EventRecord buffer[1024];
  for (;;) {
    const size_t n = std::fread(buffer, 1, sizeof buffer, f);
    if (n % sizeof(EventRecord) != 0) {
      std::fclose(f);
      return fail(ErrorCode::kParse, path + ": truncated record at the end");
    }
    log.records.insert(log.records.end(), buffer, buffer + n / sizeof(EventRecord));
    if (n < sizeof buffer) break;
  }
  const bool error = std::ferror(f) != 0;
  std::fclose(f);
  if (error) return fail(ErrorCode::kIo, path + ": read error");
  return log;
}

EventLogWriter::~EventLogWriter() { (void)close(); }

Result<void> EventLogWriter::open(const std::string& path, std::uint16_t scheduleIdentifier,
                                  std::uint64_t contentHash) {
  (void)close();
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) return fail(ErrorCode::kIo, path + ": cannot create event log: " + std::strerror(errno));
  path_ = path;
  failed_ = false;
  header_ = EventLogHeader{};
  std::memcpy(header_.magic, kEventLogMagic, sizeof kEventLogMagic);
  header_.version = kEventLogVersion;
  header_.headerSize = sizeof(EventLogHeader);
  header_.recordSize = sizeof(EventRecord);
  header_.scheduleIdentifier = scheduleIdentifier;
  header_.scheduleContentHash = contentHash;
  if (std::fwrite(&header_, sizeof header_, 1, file_) != 1) failed_ = true;
  return {};
}

void EventLogWriter::setRunStart(std::int64_t runStartNs) {
  if (!file_) return;
  header_.runStartNs = runStartNs;
  const long pos = std::ftell(file_);
  if (std::fseek(file_, 0, SEEK_SET) != 0 || std::fwrite(&header_, sizeof header_, 1, file_) != 1 ||
      std::fseek(file_, pos, SEEK_SET) != 0) {
    failed_ = true;
  }
}

void EventLogWriter::append(const EventRecord* records, std::size_t count) {
  if (!file_ || count == 0) return;
  if (std::fwrite(records, sizeof(EventRecord), count, file_) != count) failed_ = true;
}

Result<void> EventLogWriter::close() {
  if (!file_) return {};
  if (std::fclose(file_) != 0) failed_ = true;
  file_ = nullptr;
  if (failed_) return fail(ErrorCode::kIo, path_ + ": error writing the event log");
  return {};
}

}  // namespace tactus
