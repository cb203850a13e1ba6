// Reliability of the runtime against what an operator (or a fault) does to it: a damaged or
// truncated segment, a client frozen or stuck, signals while a client makes no progress, deaths
// during start-up, a dead master's segment, and foreign files at the segment's name. Real
// processes; every case asserts the exit statuses, that the cause is named, that everything ends
// within 2 s of the cause, and that nothing of the instance is left in /dev/shm.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "runtime_harness.hpp"
#include "tactus/client.hpp"
#include "tactus/core/schedule_file.hpp"
#include "tactus/core/shm_layout.hpp"
#include "tactus/core/verify.hpp"
#include "test_skip.hpp"

using namespace tactus;
using namespace tactus::test;

namespace {

constexpr int kWaitMs = 10'000;
constexpr long kEndWithinMs = 2'000;  // every process ends within this of the cause

using Clock = std::chrono::steady_clock;

long msSince(Clock::time_point t) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

// Two clients on two cores, two frames per 1 ms period.
Schedule pairSchedule() {
  return makeSchedule({{"Client0", "A", "CPU0", 50'000, {}, 0, {}},
                       {"Client1", "C", "CPU1", 40'000, {"Client0.A"}, 0, {}},
                       {"Client0", "B", "CPU0", 20'000, {"Client1.C"}, 0, {}}},
                      1'000'000, 2);
}

struct Trial {
  std::string instance, dir, schedulePath;
  Schedule schedule;

  explicit Trial(const std::string& tag, Schedule s = pairSchedule()) : schedule(std::move(s)) {
    instance = uniqueInstance(tag);
    dir = scratchDir(instance);
    schedulePath = dir + "/schedule.tsched";
    REQUIRE(verifySchedule(schedule).ok());
    REQUIRE(saveScheduleFile(schedule, schedulePath).has_value());
  }
  ~Trial() {
    endSpawnedProcesses();
    std::error_code ignored;
    if (std::filesystem::is_symlink(segment(), ignored) || std::filesystem::is_directory(segment(), ignored) ||
        segmentPresent(instance)) {
      std::filesystem::remove_all(segment(), ignored);
    }
    if (std::getenv("TACTUS_KEEP_TEST_FILES") == nullptr) std::filesystem::remove_all(dir, ignored);
  }
  std::string segment() const { return "/dev/shm/tactus_" + instance; }
  std::string out(const std::string& who) const { return dir + "/" + who + ".out"; }
  pid_t master(std::vector<std::string> extra, const std::string& who = "master") const {
    std::vector<std::string> argv{buildPath("master/tactus-master"), "-s", schedulePath, "-D", instance};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return spawn(argv, out(who));
  }
  pid_t client(const std::string& name, std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv{buildPath("tests/runtime/tactus-test-client"), "--name", name, "--instance",
                                  instance};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return spawn(argv, out(name));
  }
  // Waits until the run is going (the segment's state is kRunning: every client entered), and a
  // little longer, so frames have run.
  void awaitRunning() const;
};

// The segment's bytes, mapped read-write by the test (it plays the part of whoever damages it).
struct Mapped {
  int fd = -1;
  std::byte* bytes = nullptr;
  std::size_t size = 0;
  explicit Mapped(const std::string& path) {
    fd = ::open(path.c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    size = static_cast<std::size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REQUIRE(p != MAP_FAILED);
    bytes = static_cast<std::byte*>(p);
  }
  ~Mapped() {
    if (bytes != nullptr) ::munmap(bytes, size);
    if (fd >= 0) ::close(fd);
  }
  // A header field by its byte offset (the header's layout is frozen: line 1 holds the offsets).
  std::uint64_t u64(std::size_t offset) const {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes + offset, sizeof v);
    return v;
  }
  void put32(std::size_t offset, std::uint32_t v) const { std::memcpy(bytes + offset, &v, sizeof v); }
  void put64(std::size_t offset, std::uint64_t v) const { std::memcpy(bytes + offset, &v, sizeof v); }
};

void Trial::awaitRunning() const {
  REQUIRE(waitForSegmentState(instance, static_cast<std::uint32_t>(shm::SegmentState::kRunning), kWaitMs));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

constexpr std::size_t kEpochOffsetField = 64 + 8;    // SegmentHeader::epochOffset
constexpr std::size_t kClientOffsetField = 64 + 24;  // SegmentHeader::clientOffset
constexpr std::size_t kClientSlotSize = 64;

bool exitedBySignal(int code) { return code > 128 && code < 128 + 65; }

// The master (with a 5 s stuck limit) and both clients of a damage trial, started and running.
struct RunningPair {
  pid_t master = -1, client0 = -1, client1 = -1;
};

RunningPair startRunningPair(const Trial& t) {
  RunningPair r;
  r.master = t.master({"-t", "5000000"});
  r.client0 = t.client("Client0");
  r.client1 = t.client("Client1");
  t.awaitRunning();
  return r;
}

// How the three processes of a pair ended after the damage done just before the call, and how
// long after it the last of them ended.
struct PairEnds {
  int master = -1, client0 = -1, client1 = -1;
  long ms = 0;
};

PairEnds awaitPairEnds(const RunningPair& r) {
  const auto cause = Clock::now();
  PairEnds e;
  e.master = waitFor(r.master, kWaitMs);
  e.client0 = waitFor(r.client0, kWaitMs);
  e.client1 = waitFor(r.client1, kWaitMs);
  e.ms = msSince(cause);
  return e;
}

}  // namespace

TEST_CASE("a header offset written over during the run ends it as damage naming the field", "[reliability][damage]") {
  Trial t("dmg_offset");
  const RunningPair run = startRunningPair(t);
  {
    Mapped seg(t.segment());
    seg.put64(kEpochOffsetField, seg.u64(kEpochOffsetField) + 1'000'000'000ULL);  // far outside the segment
  }
  const PairEnds ends = awaitPairEnds(run);
  CHECK(ends.ms < kEndWithinMs);
  CHECK(ends.master == 1);
  CHECK(readFile(t.out("master")).find("damaged: header field 'epochOffset'") != std::string::npos);
  CHECK(ends.client0 == 10 + static_cast<int>(RunStatus::kError));
  CHECK(ends.client1 == 10 + static_cast<int>(RunStatus::kError));
  CHECK(readFile(t.out("Client0")).find("epochOffset") != std::string::npos);
  CHECK_FALSE(segmentPresent(t.instance));
}

TEST_CASE("each header field the master writes, written over in turn, ends the run naming it",
          "[reliability][damage]") {
  // offset -> the field's name (SegmentHeader, lines 0-3; the layout is frozen by static_assert).
  const std::vector<std::pair<std::size_t, std::string>> fields = {{0, "magic"},
                                                                   {8, "layoutVersion"},
                                                                   {12, "headerSize"},
                                                                   {16, "totalSize"},
                                                                   {24, "masterPid"},
                                                                   {28, "flags"},
                                                                   {32, "masterStartTime"},
                                                                   {40, "scheduleContentHash"},
                                                                   {52, "ringCapacity"},
                                                                   {56, "gpuOffset"},
                                                                   {64, "hyperepochOffset"},
                                                                   {72, "epochOffset"},
                                                                   {80, "instanceOffset"},
                                                                   {88, "clientOffset"},
                                                                   {96, "workerOffset"},
                                                                   {104, "ringOffset"},
                                                                   {112, "scheduleTextOffset"},
                                                                   {120, "scheduleTextSize"},
                                                                   {128, "hyperepochCount"},
                                                                   {132, "epochCount"},
                                                                   {136, "instanceCount"},
                                                                   {140, "clientCount"},
                                                                   {144, "workerCount"},
                                                                   {192, "state"}};
  for (const auto& [offset, name] : fields) {
    INFO("field " << name);
    Trial t("dmg_field");
    const RunningPair run = startRunningPair(t);
    {
      Mapped seg(t.segment());
      std::uint32_t v = 0;
      std::memcpy(&v, seg.bytes + offset, sizeof v);
      seg.put32(offset, v ^ 0x5a5a5a5au);
    }
    const PairEnds ends = awaitPairEnds(run);
    CHECK(ends.ms < kEndWithinMs);
    CHECK(ends.master == 1);
    CHECK(readFile(t.out("master")).find("damaged: header field '" + name + "'") != std::string::npos);
    for (const int code : {ends.client0, ends.client1}) CHECK(code == 10 + static_cast<int>(RunStatus::kError));
    CHECK_FALSE(segmentPresent(t.instance));
  }
}

TEST_CASE("a client pid written over during the run is reported as damage, not as a death", "[reliability][damage]") {
  Trial t("dmg_pid");
  const RunningPair run = startRunningPair(t);
  {
    Mapped seg(t.segment());
    seg.put32(seg.u64(kClientOffsetField) + 1 * kClientSlotSize, 16'777'216u);  // Client1's pid, one byte off
  }
  const PairEnds ends = awaitPairEnds(run);
  CHECK(ends.master == 1);
  CHECK(ends.client0 == 10 + static_cast<int>(RunStatus::kError));
  CHECK(ends.client1 == 10 + static_cast<int>(RunStatus::kError));
  CHECK(ends.ms < kEndWithinMs);
  const std::string out = readFile(t.out("master"));
  CHECK(out.find("client 'Client1' (pid " + std::to_string(run.client1) +
                 "): field 'pid' holds 16777216, out of range") != std::string::npos);
  CHECK(out.find("died") == std::string::npos);
  CHECK_FALSE(segmentPresent(t.instance));
}

TEST_CASE("zeros over the whole segment during the run end it in order", "[reliability][damage]") {
  Trial t("dmg_zeros");
  const RunningPair run = startRunningPair(t);
  {
    Mapped seg(t.segment());
    std::memset(seg.bytes, 0, seg.size);
  }
  const PairEnds ends = awaitPairEnds(run);
  CHECK(ends.ms < kEndWithinMs);
  CHECK(ends.master == 1);
  CHECK(readFile(t.out("master")).find("damaged") != std::string::npos);
  for (const int code : {ends.client0, ends.client1}) {
    CHECK_FALSE(exitedBySignal(code));
    CHECK(code != -1);  // not killed by waitFor: it ended on its own
  }
  CHECK_FALSE(segmentPresent(t.instance));
}

TEST_CASE("a segment truncated under a running master and its clients ends the run without a SIGBUS",
          "[reliability][damage]") {
  Trial t("dmg_trunc");
  const RunningPair run = startRunningPair(t);
  REQUIRE(::truncate(t.segment().c_str(), 4096) == 0);  // the header stays, every slot goes
  const PairEnds ends = awaitPairEnds(run);
  CHECK(ends.ms < kEndWithinMs);
  CHECK(ends.master == 1);
  CHECK(readFile(t.out("master")).find("truncated") != std::string::npos);
  for (const int code : {ends.client0, ends.client1}) {
    CHECK_FALSE(exitedBySignal(code));
    CHECK(code == 10 + static_cast<int>(RunStatus::kError));
  }
  CHECK(readFile(t.out("Client0")).find("damaged") != std::string::npos);
  CHECK_FALSE(segmentPresent(t.instance));
}

TEST_CASE("a segment truncated to 0 bytes is named as truncated by the master and every client",
          "[reliability][damage]") {
  Trial t("dmg_trunc0");
  const RunningPair run = startRunningPair(t);
  REQUIRE(::truncate(t.segment().c_str(), 0) == 0);  // every ring field then reads 0
  const PairEnds ends = awaitPairEnds(run);
  CHECK(ends.ms < kEndWithinMs);
  CHECK(ends.master == 1);
  const std::string master = readFile(t.out("master"));
  INFO(master);
  CHECK(master.find("damaged: truncated to 0 of ") != std::string::npos);
  CHECK(master.find("'head'") == std::string::npos);
  for (const std::string who : {"Client0", "Client1"}) {
    const std::string out = readFile(t.out(who));
    INFO(who << ": " << out);
    CHECK(out.find("damaged: truncated") != std::string::npos);
    CHECK(out.find("master died") == std::string::npos);
  }
  CHECK_FALSE(segmentPresent(t.instance));
}

TEST_CASE("a client takes the master's end only through fields that hold what a master writes",
          "[reliability][damage]") {
  constexpr std::size_t kStateField = 192, kStopReasonField = 200, kStopClientField = 204, kMessageField = 320;
  struct Case {
    std::string what, named;
    std::uint32_t reason, client;
    bool garbageMessage;
  };
  const std::vector<Case> cases = {
      {"random message bytes", "header field 'message' is not NUL-terminated", 6, 0xffffffffu, true},
      {"a reason out of range", "header field 'stopReason' holds 77", 77, 0xffffffffu, false},
      {"a client out of range", "header field 'stopClient' holds 9", 5, 9, false}};
  for (const Case& c : cases) {
    INFO(c.what);
    Trial t("dmg_end");
    const RunningPair run = startRunningPair(t);
    ::kill(run.master, SIGSTOP);  // the clients read the forged end before the master could write its own
    {
      Mapped seg(t.segment());
      if (c.garbageMessage) {
        for (std::size_t k = 0; k < shm::kMessageSize; ++k)
          seg.bytes[kMessageField + k] = static_cast<std::byte>(0x80 | (k * 37 + 11));  // no NUL, no text
      } else {
        std::memcpy(seg.bytes + kMessageField, "forged", 7);
      }
      seg.put32(kStopReasonField, c.reason);
      seg.put32(kStopClientField, c.client);
      seg.put32(kStateField, static_cast<std::uint32_t>(shm::SegmentState::kAborted));
    }
    const int client0 = waitFor(run.client0, kWaitMs), client1 = waitFor(run.client1, kWaitMs);
    ::kill(run.master, SIGCONT);
    CHECK(waitFor(run.master, kWaitMs) == 1);
    for (const auto& [who, code] : {std::pair<std::string, int>{"Client0", client0}, {"Client1", client1}}) {
      const std::string out = readFile(t.out(who));
      INFO(who << ": " << out);
      CHECK(code == 10 + static_cast<int>(RunStatus::kError));
      CHECK(out.find("segment " + t.segment() + " damaged: " + c.named) != std::string::npos);
      CHECK(out.find("forged") == std::string::npos);
    }
    CHECK_FALSE(segmentPresent(t.instance));
  }
}

TEST_CASE("a segment removed or replaced at its name during the run ends it, leaving the new file alone",
          "[reliability][damage]") {
  for (const bool replace : {false, true}) {
    INFO((replace ? "replaced" : "removed"));
    Trial t(replace ? "dmg_replaced" : "dmg_removed");
    const RunningPair run = startRunningPair(t);
    REQUIRE(::unlink(t.segment().c_str()) == 0);
    if (replace) {
      const int fd = ::open(t.segment().c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
      REQUIRE(fd >= 0);
      ::close(fd);
    }
    const PairEnds ends = awaitPairEnds(run);
    CHECK(ends.master == 1);
    CHECK(ends.client0 == 10 + static_cast<int>(RunStatus::kError));
    CHECK(ends.client1 == 10 + static_cast<int>(RunStatus::kError));
    CHECK(ends.ms < kEndWithinMs);
    // A replacement is an unlink and a create: a master that looks in between sees the removal.
    const std::string master = readFile(t.out("master"));
    CHECK((master.find("damaged: removed from") != std::string::npos ||
           (replace && master.find("damaged: replaced") != std::string::npos)));
    CHECK(segmentPresent(t.instance) == replace);  // the newcomer's file is not the master's to remove
  }
}

TEST_CASE("a client stuck in a runnable is named as stuck once it exceeds -t, and the run ends",
          "[reliability][stuck]") {
  Trial t("stuck");
  const std::string marker = t.dir + "/hanging";
  const pid_t m = t.master({"-t", "300000"});
  const pid_t c0 = t.client("Client0");
  const pid_t c1 = t.client("Client1", {"--hang-runnable", "C", "--hang-at-iteration", "30", "--marker", marker});
  REQUIRE(waitForPath(marker, kWaitMs));
  const auto cause = Clock::now();
  CHECK(waitFor(m, kWaitMs) == 1);
  CHECK(waitFor(c0, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  CHECK(msSince(cause) < 300 + kEndWithinMs);
  const std::string out = readFile(t.out("master"));
  CHECK(out.find("client 'Client1' (pid " + std::to_string(c1) + ") is stuck: runnable 'Client1.C'") !=
        std::string::npos);
  CHECK(readFile(t.out("Client0")).find("status=peer-died peer=Client1") != std::string::npos);
  CHECK_FALSE(segmentPresent(t.instance));
  ::kill(c1, SIGKILL);  // it hangs in its runnable by design
  waitFor(c1, kWaitMs);
}

TEST_CASE("a hyperepoch's Monitor budget bounds how long a client may make no progress", "[reliability][stuck]") {
  Schedule s = pairSchedule();
  s.hyperepochs[0].monitorNs = 200'000'000;
  Trial t("stuck_monitor", s);
  const std::string marker = t.dir + "/hanging";
  const pid_t m = t.master({"-t", "-1"});  // no -t budget: the Monitor budget alone decides
  const pid_t c0 = t.client("Client0", {"--hang-runnable", "B", "--hang-at-iteration", "20", "--marker", marker});
  const pid_t c1 = t.client("Client1");
  REQUIRE(waitForPath(marker, kWaitMs));
  const auto cause = Clock::now();
  CHECK(waitFor(m, kWaitMs) == 1);
  CHECK(msSince(cause) < 200 + kEndWithinMs);
  CHECK(readFile(t.out("master"))
            .find("client 'Client0' (pid " + std::to_string(c0) +
                  ") is stuck: runnable 'Client0.B' made no progress for") != std::string::npos);
  CHECK(readFile(t.out("master")).find("beyond the Monitor budget of hyperepoch 'Main', 200ms") != std::string::npos);
  CHECK(waitFor(c1, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  CHECK_FALSE(segmentPresent(t.instance));
  ::kill(c0, SIGKILL);  // it hangs in its runnable by design
  waitFor(c0, kWaitMs);
}

TEST_CASE("a client frozen with SIGSTOP is named as stuck, and continues to a clean exit", "[reliability][stuck]") {
  Trial t("frozen");
  const pid_t m = t.master({"-t", "400000"});
  const pid_t c0 = t.client("Client0");
  const pid_t c1 = t.client("Client1");
  t.awaitRunning();
  ::kill(c1, SIGSTOP);
  const auto cause = Clock::now();
  CHECK(waitFor(m, kWaitMs) == 1);
  CHECK(msSince(cause) < 400 + kEndWithinMs);
  CHECK(readFile(t.out("master")).find("client 'Client1' (pid " + std::to_string(c1) + ") is stuck") !=
        std::string::npos);
  CHECK(waitFor(c0, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  ::kill(c1, SIGCONT);
  const int code1 = waitFor(c1, kWaitMs);
  CHECK_FALSE(exitedBySignal(code1));
  CHECK(code1 == 10 + static_cast<int>(RunStatus::kPeerDied));  // the run ended naming it
  CHECK_FALSE(segmentPresent(t.instance));
}

TEST_CASE("SIGTERM reaches the master while a frozen client makes no progress", "[reliability][signal]") {
  Trial t("term_frozen");
  const pid_t m = t.master({"-t", "-1"});  // no budget: only the signal ends this run
  const pid_t c0 = t.client("Client0");
  const pid_t c1 = t.client("Client1");
  t.awaitRunning();
  ::kill(c1, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(m, SIGTERM);
  const auto cause = Clock::now();
  CHECK(waitFor(m, kWaitMs) == 0);
  CHECK(msSince(cause) < kEndWithinMs);
  CHECK(waitFor(c0, kWaitMs) == 0);
  CHECK(readFile(t.out("Client0")).find("status=stopped-by-signal") != std::string::npos);
  CHECK(readFile(t.out("Client0")).find("did not finish runnable 'Client1.C'") != std::string::npos);
  ::kill(c1, SIGCONT);
  CHECK(waitFor(c1, kWaitMs) == 0);
  CHECK_FALSE(segmentPresent(t.instance));
}

TEST_CASE("a client that claimed its slot and died before it finished attaching is reported at once as a death",
          "[reliability][startup]") {
  Trial t("attach_death");
  const pid_t m = t.master({"-t", "5000000"});
  const pid_t c0 = t.client("Client0");
  REQUIRE(waitForPath(t.segment(), kWaitMs));
  {
    // Client0 in the scheduler first (its slot's state kEntered): one still attaching when the
    // master ends would wait for the next master instead (a slow start under a sanitizer).
    const Mapped seg(t.segment());
    const auto* state =
        reinterpret_cast<const std::atomic<std::uint32_t>*>(seg.bytes + seg.u64(kClientOffsetField) + 4);
    const auto since = Clock::now();
    while (state->load() != static_cast<std::uint32_t>(shm::ClientState::kEntered) && msSince(since) < kWaitMs) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE(state->load() == static_cast<std::uint32_t>(shm::ClientState::kEntered));
  }
  // A process that claims Client1's slot the way init does (its pid, compare-exchange from 0)
  // and dies before it writes anything else.
  const pid_t half = ::fork();
  if (half == 0) {
    const int fd = ::open(t.segment().c_str(), O_RDWR);
    if (fd < 0) ::_exit(2);
    void* p = ::mmap(nullptr, std::size_t{4096} * 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) ::_exit(2);
    auto* bytes = static_cast<std::byte*>(p);
    std::uint64_t clientOffset = 0;
    std::memcpy(&clientOffset, bytes + kClientOffsetField, sizeof clientOffset);
    if (clientOffset + 2 * kClientSlotSize > std::uint64_t{4096} * 4) ::_exit(2);
    auto* pid = reinterpret_cast<std::atomic<std::uint32_t>*>(bytes + clientOffset + kClientSlotSize);
    std::uint32_t expected = 0;
    pid->compare_exchange_strong(expected, static_cast<std::uint32_t>(::getpid()));
    ::_exit(expected == 0 ? 0 : 3);
  }
  adoptChild(half);
  // Not reaped yet: a zombie, as a killed client is until its parent waits for it.
  for (int i = 0; i < 1000 && readFile("/proc/" + std::to_string(half) + "/stat").find(") Z") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto cause = Clock::now();
  CHECK(waitFor(m, kWaitMs) == 1);
  CHECK(msSince(cause) < 1000);  // long before -t (5 s)
  CHECK(readFile(t.out("master")).find("client 'Client1' (pid " + std::to_string(half) + ") died") !=
        std::string::npos);
  CHECK(waitFor(c0, kWaitMs) == 10 + static_cast<int>(RunStatus::kPeerDied));
  CHECK(waitFor(half, kWaitMs) == 0);
  CHECK_FALSE(segmentPresent(t.instance));
}

TEST_CASE("a client that finds a dead master's segment removes it and says, once, what it waits for",
          "[reliability][startup]") {
  Trial t("dead_master");
  const pid_t m = t.master({"-t", "-1"});
  REQUIRE(waitForPath(t.segment(), kWaitMs));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(m, SIGKILL);
  REQUIRE(waitFor(m, kWaitMs) == 128 + SIGKILL);
  REQUIRE(segmentPresent(t.instance));
  const pid_t c0 = t.client("Client0", {"--timeout-ms", "600"});
  CHECK(waitFor(c0, kWaitMs) == 3);
  CHECK_FALSE(segmentPresent(t.instance));
  const std::string out = readFile(t.out("Client0"));
  const std::string waiting =
      "waiting for tactus-master of instance '" + t.instance + "' (segment " + t.segment() + "): ";
  CHECK(out.find(waiting + "its master pid " + std::to_string(m) + " is gone; removed the segment it left") !=
        std::string::npos);
  // Then the usual wait for a master not started yet: one short line (explained after 3 s, or in the
  // error of a timeout).
  CHECK(out.find("waiting for tactus-master of instance '" + t.instance + "'\n") != std::string::npos);
  CHECK(out.find("no master for instance '" + t.instance + "' within 600 ms (there is no segment yet") !=
        std::string::npos);
  // Each reason once, although the client looked every 10 ms.
  std::size_t count = 0;
  for (std::size_t at = out.find("waiting for tactus-master"); at != std::string::npos;
       at = out.find("waiting for tactus-master", at + 1)) {
    ++count;
  }
  CHECK(count == 2);
}

TEST_CASE("a directory at the segment's name is reported with the system's reason and what to do",
          "[reliability][foreign]") {
  Trial t("foreign_dir");
  REQUIRE(::mkdir(t.segment().c_str(), 0700) == 0);
  REQUIRE(::mkdir((t.segment() + "/keep").c_str(), 0700) == 0);  // not empty: cannot be removed
  const auto start = Clock::now();
  const pid_t m = t.master({"-t", "200000"});
  CHECK(waitFor(m, kWaitMs) == 2);
  CHECK(msSince(start) < kEndWithinMs);
  const std::string out = readFile(t.out("master"));
  INFO(out);
  CHECK(out.find("Is a directory") != std::string::npos);
  CHECK(out.find("is a directory owned by uid") != std::string::npos);
  CHECK(out.find("pick another instance with -D") != std::string::npos);
  CHECK(out.find("keeps reappearing") == std::string::npos);
}

TEST_CASE("a symbolic link at the segment's name: a client waits saying why, the master replaces it",
          "[reliability][foreign]") {
  Trial t("foreign_link");
  const std::string target = t.dir + "/elsewhere";
  {
    std::FILE* f = std::fopen(target.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fclose(f);
  }
  REQUIRE(::symlink(target.c_str(), t.segment().c_str()) == 0);
  const pid_t c0 = t.client("Client0", {"--timeout-ms", "300"});
  CHECK(waitFor(c0, kWaitMs) == 3);
  const std::string out = readFile(t.out("Client0"));
  CHECK(out.find("waiting for tactus-master of instance '" + t.instance + "'") != std::string::npos);
  CHECK(out.find("is a symbolic link") != std::string::npos);
  // The master may remove a link this user owns, and runs.
  const pid_t m = t.master({"-e", "20"});
  const pid_t a = t.client("Client0");
  const pid_t b = t.client("Client1");
  CHECK(waitFor(m, kWaitMs) == 0);
  CHECK(waitFor(a, kWaitMs) == 0);
  CHECK(waitFor(b, kWaitMs) == 0);
  CHECK(readFile(t.out("master")).find(t.segment() + " is no usable segment") != std::string::npos);
  CHECK(std::filesystem::exists(target));  // the link went, not what it pointed to
  CHECK_FALSE(segmentPresent(t.instance));
}

TEST_CASE("another user's file at the segment's name: the master names the system's reasons and what to do",
          "[reliability][foreign][users]") {
  if (::geteuid() != 0) TACTUS_SKIP("needs root to play two users (a file of root's, a master of nobody's)");
  constexpr uid_t kNobody = 65534;
  Trial t("foreign_user");
  // A schedule the unprivileged master can read.
  const std::string shared = t.dir + "-readable";
  REQUIRE(::mkdir(shared.c_str(), 0755) == 0);
  const std::string schedule = shared + "/schedule.tsched";
  REQUIRE(saveScheduleFile(t.schedule, schedule).has_value());
  REQUIRE(::chmod(schedule.c_str(), 0644) == 0);
  {
    const int fd = ::open(t.segment().c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);  // root's, mode 0600
    REQUIRE(fd >= 0);
    ::close(fd);
  }
  const std::string master = buildPath("master/tactus-master");
  {
    // The build may live where nobody cannot go (a mode-0700 checkout such as `mktemp -d` makes):
    // ask, as nobody, before reading an exit status 127 as the master's answer.
    const pid_t probe = ::fork();
    if (probe == 0) {
      if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(2);
      ::_exit(::access(master.c_str(), X_OK) == 0 && ::access(schedule.c_str(), R_OK) == 0 ? 0 : 1);
    }
    adoptChild(probe);
    if (waitFor(probe, kWaitMs) != 0) {
      std::error_code ignored;
      std::filesystem::remove_all(shared, ignored);
      TACTUS_SKIP("user nobody (uid 65534) cannot run " << master
                                                        << " (a directory above it is closed to other users)");
    }
  }
  const std::string output = t.out("master");
  const pid_t m = ::fork();
  if (m == 0) {
    const int fd = ::open(output.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0) ::_exit(126);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(126);
    ::execl(master.c_str(), master.c_str(), "-s", schedule.c_str(), "-D", t.instance.c_str(), "-t", "200000",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  adoptChild(m);
  const auto start = Clock::now();
  CHECK(waitFor(m, kWaitMs) == 2);
  CHECK(msSince(start) < kEndWithinMs);
  const std::string out = readFile(output);
  INFO(out);
  CHECK(out.find("cannot open shared memory: Permission denied (errno 13)") != std::string::npos);
  CHECK(out.find("cannot remove it: Permission denied (errno 13)") != std::string::npos);
  CHECK(out.find("owned by uid 0 (mode 0600), not by this user (uid 65534)") != std::string::npos);
  CHECK(out.find("remove it by hand (as its owner or root) or pick another instance with -D") != std::string::npos);
  CHECK(out.find("keeps reappearing") == std::string::npos);
  CHECK(segmentPresent(t.instance));  // root's file is left alone
  std::error_code ignored;
  std::filesystem::remove_all(shared, ignored);
}

// Damage that satisfies every wait of a worker (a release count and a stop iteration far ahead)
// must not keep it running once its master has gone: with nothing to wait for, the worker looks
// at the run's end once per iteration (it used to look only while waiting, and ran on for ever).
namespace {

// A pid that is gone: a child that exited and was reaped.
pid_t deadPid() {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  return child;
}

// What a master killed while it created its segments leaves at `name`: a schedule segment (or the
// manager channel) naming master `pid`, whose owner lock nobody holds.
void leaveRemains(const std::string& name, pid_t pid, bool channel) {
  const std::string path = "/dev/shm/tactus_" + name;
  const std::size_t size = channel ? sizeof(shm::ManagerChannel) : 4096;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
  void* at = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  REQUIRE(at != MAP_FAILED);
  if (channel) {
    auto& c = *static_cast<shm::ManagerChannel*>(at);
    c.layoutVersion = shm::kLayoutVersion;
    c.masterPid.store(static_cast<std::uint32_t>(pid));
    c.magic.store(shm::kManagerMagic);
  } else {
    auto& h = *static_cast<shm::SegmentHeader*>(at);
    h.layoutVersion = shm::kLayoutVersion;
    h.headerSize = sizeof(shm::SegmentHeader);
    h.magic.store(shm::kMagic);
    h.masterPid.store(static_cast<std::uint32_t>(pid));
  }
  ::munmap(at, size);
}

}  // namespace

TEST_CASE("what a managed master killed in its start leaves is removed whole by the next master or a client",
          "[reliability][startup]") {
  Trial t("remains");
  const std::vector<std::string> group{t.instance, t.instance + ".schedule1", t.instance + ".manager"};
  const pid_t gone = deadPid();
  // Killed before it created its first segment: the next master (of one schedule, no manager)
  // removes the others too.
  leaveRemains(group[1], gone, false);
  leaveRemains(group[2], gone, true);
  const pid_t m = t.master({"-t", "200000"});
  CHECK(waitFor(m, kWaitMs) == 1);  // its clients never come
  const std::string master = readFile(t.out("master"));
  INFO(master);
  CHECK(master.find("removed stale segment /dev/shm/tactus_" + group[1] + " (master pid " + std::to_string(gone) +
                    " is gone)") != std::string::npos);
  CHECK(master.find("removed stale segment /dev/shm/tactus_" + group[2]) != std::string::npos);
  for (const std::string& name : group) CHECK_FALSE(segmentPresent(name));
  // All three left: the client that finds the first removes the whole group.
  leaveRemains(group[0], gone, false);
  leaveRemains(group[1], gone, false);
  leaveRemains(group[2], gone, true);
  const pid_t c = t.client("Client0", {"--timeout-ms", "300"});
  CHECK(waitFor(c, kWaitMs) == 3);
  const std::string said = readFile(t.out("Client0"));
  INFO(said);
  CHECK(said.find("also removed what dead masters left of its group: /dev/shm/tactus_" + group[1]) !=
        std::string::npos);
  for (const std::string& name : group) {
    CHECK_FALSE(segmentPresent(name));
    ::unlink(("/dev/shm/tactus_" + name).c_str());
  }
}

TEST_CASE("a worker whose waits damage satisfies still stops when its master dies", "[reliability][damage]") {
  // Client0's worker on CPU0 waits only for releases; Client1 only for Client0.
  Trial t("dmg_free", makeSchedule({{"Client0", "A", "CPU0", 50'000, {}, 0, {}},
                                    {"Client1", "C", "CPU1", 40'000, {"Client0.A"}, 0, {}}},
                                   1'000'000, 1));
  const pid_t master = t.master({"-t", "5000000"});
  const pid_t client0 = t.client("Client0");
  const pid_t client1 = t.client("Client1");
  t.awaitRunning();
  ::kill(master, SIGSTOP);  // its release thread must not write `released` back, nor its checks end the run first
  {
    Mapped seg(t.segment());
    const std::uint64_t hyperepochs = seg.u64(64), epochs = seg.u64(72);  // SegmentHeader offsets
    REQUIRE((hyperepochs > 0 && hyperepochs + 64 <= seg.size && epochs > 0 && epochs + 64 <= seg.size));
    seg.put64(hyperepochs, ~std::uint64_t{0});  // HyperepochSlot::stopAt: never
    seg.put32(epochs, 0x40000000u);             // EpochSlot::released: a billion frames ahead
    ::kill(master, SIGKILL);
  }
  const auto cause = Clock::now();
  const int code0 = waitFor(client0, kWaitMs);
  const int code1 = waitFor(client1, kWaitMs);
  CHECK(msSince(cause) < kEndWithinMs);
  CHECK(code0 != -1);  // not killed by waitFor: it ended on its own
  CHECK(code1 != -1);
  CHECK_FALSE(exitedBySignal(code0));
  CHECK(waitFor(master, kWaitMs) == 128 + SIGKILL);
}

// A client the system allows no thread for its second worker (a pids cgroup of two tasks: the main
// thread and one worker) ends its part with the cause said, and the master names it: it used to
// abort ('terminate called without an active exception': the started worker's std::thread was
// destroyed joinable) and the master reported a death.
TEST_CASE("a client the system allows no thread for a worker says so and the master names it, no abort",
          "[reliability][threads]") {
  const std::string pids = "/sys/fs/cgroup/pids";
  if (::access((pids + "/cgroup.procs").c_str(), W_OK) != 0)
    TACTUS_SKIP("needs a writable cgroup v1 pids controller at " << pids << " (root)");
#if defined(__SANITIZE_THREAD__)
  // TSan's runtime starts a thread of its own in the client, inside the group: the limit then
  // refuses a thread before the workers, and cannot single out the second worker.
  TACTUS_SKIP("under TSan the runtime's own thread takes the group's second task");
#endif
  // Client0 has a worker on each core; Client1 none (it would not be needed: Client0 alone).
  Trial t("threads",
          makeSchedule({{"Client0", "A", "CPU0", 50'000, {}, 0, {}}, {"Client0", "B", "CPU1", 50'000, {}, 0, {}}},
                       1'000'000, 2));
  const std::string group = pids + "/tactus_" + t.instance;
  REQUIRE(::mkdir(group.c_str(), 0755) == 0);
  struct RemoveGroup {
    std::string path;
    ~RemoveGroup() { ::rmdir(path.c_str()); }
  } removeGroup{group};
  {
    std::ofstream max(group + "/pids.max");
    max << 2;
  }
  const pid_t m = t.master({"-t", "5000000", "-e", "200"});
  const pid_t c =
      spawn({"/bin/bash", "-c",
             "echo $$ > " + group + "/cgroup.procs && exec " + buildPath("tests/runtime/tactus-test-client") +
                 " --name Client0 --instance " + t.instance},
            t.out("Client0"));
  const int client = waitFor(c, kWaitMs);
  CHECK_FALSE(exitedBySignal(client));
  CHECK(client == 10 + static_cast<int>(RunStatus::kError));
  const std::string said = "cannot start its worker thread tactus-w1";
  CHECK(readFile(t.out("Client0")).find(said) != std::string::npos);
  CHECK(waitFor(m, kWaitMs) == 1);
  const std::string master = readFile(t.out("master"));
  INFO(master);
  // Whether the master started the run before the client left is a race (the client enters, then
  // starts its workers); either way the master names the client and the cause.
  const bool named = master.find("client 'Client0' (pid " + std::to_string(c) +
                                 ") left the scheduler while the run went on: " + said) != std::string::npos ||
                     master.find("client 'Client0' detached before the run started (" + said) != std::string::npos;
  CHECK(named);
  CHECK_FALSE(segmentPresent(t.instance));
}
