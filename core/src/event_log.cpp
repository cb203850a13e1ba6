// Event log file writer and reader.
#include "tactus/core/event_log.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

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
  if (!readsEventLogVersion(log.header.version)) {
    std::fclose(f);
    return fail(ErrorCode::kIncompatible, path + ": event log version " + std::to_string(log.header.version) +
                                              ", this build reads versions " + std::to_string(kEventLogOldestVersion) +
                                              " to " + std::to_string(kEventLogVersion));
  }
  const std::uint32_t recordSize = log.header.recordSize;
  if (log.header.headerSize != sizeof(EventLogHeader) || recordSize != eventRecordSize(log.header.version)) {
    std::fclose(f);
    return fail(ErrorCode::kParse, path + ": unexpected header or record size");
  }
  std::vector<unsigned char> buffer(std::size_t{1024} * recordSize);
  for (;;) {
    const size_t n = std::fread(buffer.data(), 1, buffer.size(), f);
    if (n % recordSize != 0) {
      std::fclose(f);
      return fail(ErrorCode::kParse, path + ": truncated record at the end");
    }
    const std::size_t count = n / recordSize;
    log.records.resize(log.records.size() + count);
    decodeEventRecords(buffer.data(), count, recordSize, log.records.data() + log.records.size() - count);
    if (n < buffer.size()) break;
  }
  const bool error = std::ferror(f) != 0;
  std::fclose(f);
  if (error) return fail(ErrorCode::kIo, path + ": read error");
  return log;
}

void decodeEventRecords(const unsigned char* bytes, std::size_t count, std::uint32_t recordSize, EventRecord* out) {
  const std::size_t copied = recordSize < sizeof(EventRecord) ? recordSize : sizeof(EventRecord);
  for (std::size_t k = 0; k < count; ++k) {
    EventRecord r{};
    std::memcpy(&r, bytes + k * recordSize, copied);
    out[k] = r;
  }
}

EventLogHeader makeEventLogHeader(std::uint16_t scheduleIdentifier, std::uint64_t contentHash) {
  EventLogHeader header{};
  std::memcpy(header.magic, kEventLogMagic, sizeof kEventLogMagic);
  header.version = kEventLogVersion;
  header.headerSize = sizeof(EventLogHeader);
  header.recordSize = sizeof(EventRecord);
  header.scheduleIdentifier = scheduleIdentifier;
  header.scheduleContentHash = contentHash;
  return header;
}

EventLogWriter::~EventLogWriter() { (void)close(); }

Result<void> EventLogWriter::open(const std::string& path, std::uint16_t scheduleIdentifier,
                                  std::uint64_t contentHash) {
  (void)close();
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) return fail(ErrorCode::kIo, path + ": cannot create event log: " + std::strerror(errno));
  path_ = path;
  failed_ = false;
  header_ = makeEventLogHeader(scheduleIdentifier, contentHash);
  if (std::fwrite(&header_, sizeof header_, 1, file_) != 1) failed_ = true;
  return {};
}

void EventLogWriter::rewriteHeader() {
  if (!file_) return;
  const long at = std::ftell(file_);
  if (std::fseek(file_, 0, SEEK_SET) != 0 || std::fwrite(&header_, sizeof header_, 1, file_) != 1 ||
      std::fseek(file_, at, SEEK_SET) != 0) {
    failed_ = true;
  }
}

void EventLogWriter::setRunStart(std::int64_t runStartNs) {
  header_.runStartNs = runStartNs;
  rewriteHeader();
}

void EventLogWriter::append(const EventRecord* records, std::size_t count) {
  if (!file_ || count == 0) return;
  if (tag_ >= 0) {
    tagged_.assign(records, records + count);
    for (EventRecord& r : tagged_) r.schedule = static_cast<std::uint16_t>(tag_);
    records = tagged_.data();
  }
  if (std::fwrite(records, sizeof(EventRecord), count, file_) != count) failed_ = true;
}

void EventLogWriter::setScheduleCount(std::uint16_t count) {
  header_.scheduleCount = count;
  rewriteHeader();
}

void EventLogWriter::setRunFlags(std::uint32_t flags) {
  header_.runFlags = flags;
  rewriteHeader();
}

Result<void> EventLogWriter::close() {
  if (!file_) return {};
  if (std::fclose(file_) != 0) failed_ = true;
  file_ = nullptr;
  if (failed_) return fail(ErrorCode::kIo, path_ + ": error writing the event log");
  return {};
}

}  // namespace tactus
