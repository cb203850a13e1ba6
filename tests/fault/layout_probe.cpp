// tactus-fault-layout: prints the shared-memory layout (header fields, client slot fields, sizes,
// magic, version) as JSON for the fault-injection driver, computed from shm_layout.hpp itself.
//
// The driver damages header fields one by one and reads `state` and the client slots; it takes
// every offset from here so that no number is copied by hand. The field lists below must tile
// their structs exactly: a field added to (or removed from) shm_layout.hpp makes this program
// print an error and exit 1, which fails the fault suite until the list is updated.
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "tactus/core/shm_layout.hpp"

namespace {

/// One field: its name, byte offset and size within its struct.
struct Field {
  const char* name;
  std::size_t offset;
  std::size_t size;
};

#define TACTUS_FIELD(Struct, member) \
  Field { #member, offsetof(Struct, member), sizeof(Struct::member) }

using tactus::shm::ClientSlot;
using tactus::shm::SegmentHeader;

const std::vector<Field> kHeaderFields = {
    TACTUS_FIELD(SegmentHeader, magic),
    TACTUS_FIELD(SegmentHeader, layoutVersion),
    TACTUS_FIELD(SegmentHeader, headerSize),
    TACTUS_FIELD(SegmentHeader, totalSize),
    TACTUS_FIELD(SegmentHeader, masterPid),
    TACTUS_FIELD(SegmentHeader, flags),
    TACTUS_FIELD(SegmentHeader, masterStartTime),
    TACTUS_FIELD(SegmentHeader, scheduleContentHash),
    TACTUS_FIELD(SegmentHeader, scheduleIdentifier),
    TACTUS_FIELD(SegmentHeader, reserved0),
    TACTUS_FIELD(SegmentHeader, ringCapacity),
    TACTUS_FIELD(SegmentHeader, gpuOffset),
    TACTUS_FIELD(SegmentHeader, hyperepochOffset),
    TACTUS_FIELD(SegmentHeader, epochOffset),
    TACTUS_FIELD(SegmentHeader, instanceOffset),
    TACTUS_FIELD(SegmentHeader, clientOffset),
    TACTUS_FIELD(SegmentHeader, workerOffset),
    TACTUS_FIELD(SegmentHeader, ringOffset),
    TACTUS_FIELD(SegmentHeader, scheduleTextOffset),
    TACTUS_FIELD(SegmentHeader, scheduleTextSize),
    TACTUS_FIELD(SegmentHeader, hyperepochCount),
    TACTUS_FIELD(SegmentHeader, epochCount),
    TACTUS_FIELD(SegmentHeader, instanceCount),
    TACTUS_FIELD(SegmentHeader, clientCount),
    TACTUS_FIELD(SegmentHeader, workerCount),
    TACTUS_FIELD(SegmentHeader, scheduleCount),
    TACTUS_FIELD(SegmentHeader, scheduleIndex),
    TACTUS_FIELD(SegmentHeader, reserved1),
    TACTUS_FIELD(SegmentHeader, switchOffset),
    TACTUS_FIELD(SegmentHeader, statsOffset),
    TACTUS_FIELD(SegmentHeader, runnableCount),
    TACTUS_FIELD(SegmentHeader, reserved5),
    TACTUS_FIELD(SegmentHeader, channelOffset),
    TACTUS_FIELD(SegmentHeader, state),
    TACTUS_FIELD(SegmentHeader, stateWaiters),
    TACTUS_FIELD(SegmentHeader, stopReason),
    TACTUS_FIELD(SegmentHeader, stopClient),
    TACTUS_FIELD(SegmentHeader, runStartNs),
    TACTUS_FIELD(SegmentHeader, reserved2),
    TACTUS_FIELD(SegmentHeader, attention),
    TACTUS_FIELD(SegmentHeader, reserved3),
    TACTUS_FIELD(SegmentHeader, message),
    TACTUS_FIELD(SegmentHeader, channelBytes),
    TACTUS_FIELD(SegmentHeader, reserved4),
};

const std::vector<Field> kClientFields = {
    TACTUS_FIELD(ClientSlot, pid),           TACTUS_FIELD(ClientSlot, state),
    TACTUS_FIELD(ClientSlot, exitRequested), TACTUS_FIELD(ClientSlot, refusalDetail),
    TACTUS_FIELD(ClientSlot, startTime),     TACTUS_FIELD(ClientSlot, switchCallbacks),
    TACTUS_FIELD(ClientSlot, refusal),       TACTUS_FIELD(ClientSlot, exitSignal),
    TACTUS_FIELD(ClientSlot, reserved),
};

// Whether `fields` (in order) cover [0, size) without gap or overlap; prints the first mismatch.
bool tiles(const char* structName, const std::vector<Field>& fields, std::size_t size) {
  std::size_t at = 0;
  for (const Field& f : fields) {
    if (f.offset != at) {
      std::fprintf(stderr,
                   "tactus-fault-layout: %s changed: field '%s' is at byte %zu, expected %zu; update the field "
                   "list in tests/fault/layout_probe.cpp\n",
                   structName, f.name, f.offset, at);
      return false;
    }
    at += f.size;
  }
  if (at != size) {
    std::fprintf(stderr,
                 "tactus-fault-layout: %s changed: the listed fields cover %zu of its %zu bytes; update the field "
                 "list in tests/fault/layout_probe.cpp\n",
                 structName, at, size);
    return false;
  }
  return true;
}

void printFields(const char* key, const std::vector<Field>& fields) {
  std::printf("  \"%s\": [\n", key);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    std::printf("    {\"name\": \"%s\", \"offset\": %zu, \"size\": %zu}%s\n", fields[i].name, fields[i].offset,
                fields[i].size, i + 1 < fields.size() ? "," : "");
  }
  std::printf("  ],\n");
}

}  // namespace

int main() {
  if (!tiles("SegmentHeader", kHeaderFields, sizeof(SegmentHeader)) ||
      !tiles("ClientSlot", kClientFields, sizeof(ClientSlot))) {
    return 1;
  }
  std::printf("{\n");
  printFields("header", kHeaderFields);
  printFields("client_slot", kClientFields);
  std::printf("  \"header_size\": %zu,\n", sizeof(SegmentHeader));
  std::printf("  \"client_slot_size\": %zu,\n", sizeof(ClientSlot));
  std::printf("  \"magic\": %llu,\n", static_cast<unsigned long long>(tactus::shm::kMagic));
  std::printf("  \"layout_version\": %u,\n", tactus::shm::kLayoutVersion);
  std::printf(
      "  \"states\": {\"creating\": %u, \"published\": %u, \"running\": %u, \"finished\": %u, \"aborted\": %u}\n",
      static_cast<unsigned>(tactus::shm::SegmentState::kCreating),
      static_cast<unsigned>(tactus::shm::SegmentState::kPublished),
      static_cast<unsigned>(tactus::shm::SegmentState::kRunning),
      static_cast<unsigned>(tactus::shm::SegmentState::kFinished),
      static_cast<unsigned>(tactus::shm::SegmentState::kAborted));
  std::printf("}\n");
  return 0;
}
