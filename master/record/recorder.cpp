#include "record/recorder.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "tactus/ipc/clock.hpp"

namespace tactus::master::record {

using tactus::record::ChunkType;
using tactus::record::LossReason;
using tactus::record::LostRecord;
using tactus::record::VersionRecord;

namespace {

const char* lossName(std::size_t reason) {
  switch (static_cast<LossReason>(reason)) {
    case LossReason::kQueueFull: return "queue full (the disk did not keep up)";
    case LossReason::kTornCopy: return "torn copy";
    case LossReason::kOverwritten: return "overwritten before copied";
    case LossReason::kWriteFailed: return "write failed";
  }
  return "?";
}

}  // namespace

std::uint64_t LossCounts::total() const {
  std::uint64_t n = 0;
  for (const auto& c : byReason) n += c.load(std::memory_order_relaxed);
  return n;
}

std::uint64_t Recorder::queueBytes() {
  const char* knob = std::getenv("TACTUS_RECORD_QUEUE_BYTES");
  const long long bytes = knob != nullptr ? std::strtoll(knob, nullptr, 10) : 0;
  return bytes > 0 ? static_cast<std::uint64_t>(bytes) : kQueueBytes;
}

Recorder::Recorder(std::vector<RecordedMode> modes, std::int64_t pollUs, ClockSource clock, IdealOf ideal)
    : modes_(std::move(modes)), pollUs_(pollUs), clock_(std::move(clock)), ideal_(std::move(ideal)) {
  for (std::uint32_t k = 0; k < modes_.size(); ++k) {
    std::uint64_t total = 0;
    rings_.push_back(shm::channelRings(*modes_[k].schedule, &total));
    for (const ChannelWrite& w : modes_[k].schedule->channelWrites) {
      Writer state{k, &w, 0};
      // What ran before the recorder started is not recorded: start from the word's value.
      state.seen = modes_[k].view->instance(w.instance).done.load(std::memory_order_acquire);
      writers_.push_back(state);
    }
    taps_.emplace_back(*this, modes_[k].schedule->identifier);
  }
  copied_ = std::vector<std::atomic<std::uint32_t>>(writers_.size());
  for (std::size_t k = 0; k < writers_.size(); ++k) copied_[k].store(static_cast<std::uint32_t>(writers_[k].seen));
  copier_ = std::thread([this] { copyLoop(); });
}

void Recorder::write(tactus::record::Writer writer) {
  file_ = std::move(writer);
  writing_ = true;
  writer_ = std::thread([this] { writeLoop(); });
}

Recorder::~Recorder() {
  if (copier_.joinable() || writer_.joinable()) (void)finish(0, 0);
}

void Recorder::copyLoop() {
  while (!stop_.load(std::memory_order_acquire)) {
    catchUp();
    std::this_thread::sleep_for(std::chrono::microseconds(pollUs_));
  }
  catchUp();  // what ended before the stop
  const std::lock_guard<std::mutex> guard(lock_);
  copierDone_ = true;
  ready_.notify_one();
}

void Recorder::catchUp() {
  const std::lock_guard<std::mutex> guard(copyLock_);
  pollOnce();
}

void Recorder::catchUpIfBehind() {
  for (std::size_t k = 0; k < writers_.size(); ++k) {
    const Writer& w = writers_[k];
    const std::uint32_t done = modes_[w.mode].view->instance(w.write->instance).done.load(std::memory_order_acquire);
    if (done != copied_[k].load(std::memory_order_acquire)) {
      catchUp();
      return;
    }
  }
}

void Recorder::pollOnce() {
  for (std::size_t k = 0; k < writers_.size(); ++k) {
    Writer& w = writers_[k];
    const std::uint32_t done = modes_[w.mode].view->instance(w.write->instance).done.load(std::memory_order_acquire);
    const auto ahead = static_cast<std::uint32_t>(done - static_cast<std::uint32_t>(w.seen));
    if (ahead == 0 || ahead > (1U << 30)) continue;  // nothing new (or a word that went back: ignored)
    for (std::uint64_t h = w.seen; h < w.seen + ahead; ++h) copyVersion(w, h);
    w.seen += ahead;
    copied_[k].store(static_cast<std::uint32_t>(w.seen), std::memory_order_release);
  }
}

// Copies the version writer run `h` left, if its buffer still holds it whole.
void Recorder::copyVersion(const Writer& w, std::uint64_t h) {
  const shm::ChannelRing& ring = rings_[w.mode][w.write->channel];
  const std::uint64_t buffer = (w.write->slot + h * ring.writes) % ring.depth;
  std::byte* at = modes_[w.mode].view->channelArea().data() + ring.offset + buffer * ring.stride;
  auto* v = reinterpret_cast<shm::ChannelVersion*>(at);
  // A version is its (iteration, writer instance): the instances of one iteration that share a
  // buffer stamp the same iteration, so both words are checked, before the copy and after it.
  const auto instance = static_cast<std::uint32_t>(w.write->instance);
  const std::uint64_t stamp = v->iteration.load(std::memory_order_acquire);
  const std::uint32_t writer = v->writerInstance.load(std::memory_order_relaxed);
  if (stamp != h + 1 || writer != instance) {
    // A run that took no buffer (it did not write the channel this time) leaves an older stamp; a
    // later run, or another instance of the same iteration, took the buffer before the copy.
    if (stamp > h + 1 || (stamp == h + 1 && writer != instance))
      lose(LossReason::kOverwritten, w.mode, w.write->channel, h);
    return;
  }
  Item item;
  item.rec.iteration = h + 1;
  item.rec.writtenNs = v->writtenNs.load(std::memory_order_relaxed);
  item.rec.sourceNs = v->sourceNs.load(std::memory_order_relaxed);
  item.rec.scheduleId = modes_[w.mode].schedule->identifier;
  item.rec.channel = w.write->channel;
  item.rec.writerInstance = static_cast<std::uint32_t>(w.write->instance);
  item.rec.dataSize = static_cast<std::uint32_t>(ring.size);
  {
    const std::lock_guard<std::mutex> guard(lock_);
    if (queuedBytes_ + ring.size > queueLimit_) {
      lose(LossReason::kQueueFull, w.mode, w.write->channel, h);
      return;
    }
  }
  item.data.resize(ring.size);
  std::memcpy(item.data.data(), at + sizeof(shm::ChannelVersion), ring.size);
#if defined(__SANITIZE_THREAD__)
  // TSan models no fences (GCC refuses them under -fsanitize=thread): a read-modify-write of the
  // stamp orders the copy before the check there. The TSan stage does not run recordings.
  (void)v->iteration.fetch_add(0, std::memory_order_acq_rel);
#else
  std::atomic_thread_fence(std::memory_order_acquire);  // the copy's loads before the stamp's re-read
#endif
  if (v->iteration.load(std::memory_order_relaxed) != stamp ||
      v->writerInstance.load(std::memory_order_relaxed) != instance) {  // another run took the buffer meanwhile
    lose(LossReason::kTornCopy, w.mode, w.write->channel, h);
    return;
  }
  const std::lock_guard<std::mutex> guard(lock_);
  queuedBytes_ += ring.size;
  queue_.push_back(std::move(item));
  ready_.notify_one();
}

void Recorder::lose(LossReason reason, std::uint32_t mode, std::uint32_t channel, std::uint64_t iteration) {
  std::uint64_t none = 0;
  firstLostIteration_.compare_exchange_strong(none, iteration + 1);
  {
    // The first loss in words, for --record-required's end (the run's monitor loop asks for it).
    const std::lock_guard<std::mutex> guard(firstLossLock_);
    if (firstLoss_.empty()) {
      std::string where = "a record of no schedule";
      if (mode < modes_.size()) {
        const Schedule& s = *modes_[mode].schedule;
        where = (channel < s.channels.size() ? "channel '" + s.channels[channel].name + "'" : "a channel") +
                (modes_.size() > 1 ? " of schedule " + std::to_string(s.identifier) : "");
      }
      firstLoss_ = std::string(lossName(static_cast<std::size_t>(reason))) + ", " + where + ", iteration " +
                   std::to_string(iteration);
    }
  }
  losses_.byReason[static_cast<std::size_t>(reason)].fetch_add(1, std::memory_order_release);
}

std::uint32_t Recorder::modeOf(std::uint32_t scheduleId) const {
  for (std::uint32_t k = 0; k < modes_.size(); ++k)
    if (modes_[k].schedule->identifier == scheduleId) return k;
  return static_cast<std::uint32_t>(modes_.size());
}

std::string Recorder::firstLoss() const {
  const std::lock_guard<std::mutex> guard(firstLossLock_);
  return firstLoss_;
}

void Recorder::writeLoop() {
  std::unique_lock<std::mutex> guard(lock_);
  for (;;) {
    ready_.wait_for(guard, std::chrono::milliseconds(100), [this] { return !queue_.empty() || copierDone_; });
    while (!queue_.empty()) {
      Item item = std::move(queue_.front());
      queue_.pop_front();
      guard.unlock();
      if (!writeFailed_) {
        if (auto ok = file_.append(item.type, &item.rec, item.fixedBytes, item.data.data(), item.data.size()); !ok) {
          writeFailed_ = true;
          writeError_ = ok.error();
        }
      }
      if (writeFailed_)
        lose(LossReason::kWriteFailed, modeOf(item.rec.scheduleId), item.rec.channel, item.rec.iteration - 1);
      else if (item.type == ChunkType::kVersion) versions_.fetch_add(1, std::memory_order_relaxed);
      guard.lock();
      queuedBytes_ -= item.data.size();
    }
    guard.unlock();
    writeLosses();
    writeClock(ipc::monotonicNs(), false);
    guard.lock();
    if (copierDone_ && queue_.empty()) return;
  }
}

// A lost record per reason whose count grew since the last one (the recording says where it has holes).
void Recorder::writeLosses() {
  for (std::size_t r = 1; r < 5; ++r) {
    const std::uint64_t now = losses_.byReason[r].load(std::memory_order_relaxed);
    if (now == lossesWritten_[r] || writeFailed_) continue;
    const LostRecord rec{now - lossesWritten_[r], firstLostIteration_.load(), static_cast<std::uint32_t>(r),
                         0xFFFFFFFFU};
    if (auto ok = file_.append(ChunkType::kLost, rec); !ok) {
      writeFailed_ = true;
      writeError_ = ok.error();
      return;
    }
    lossesWritten_[r] = now;
  }
}

void Recorder::queueEvent(ChunkType type, const void* fixed, std::size_t bytes) {
  Item item;
  item.type = type;
  item.fixedBytes = bytes;
  std::memcpy(&item.rec, fixed, bytes);
  const std::lock_guard<std::mutex> guard(lock_);
  if (finished_ || copierDone_) return;
  queue_.push_back(std::move(item));
  ready_.notify_one();
}

// A multi-SoC run's clock estimate, when it changed since the one last written (looked at every
// 100 ms: the follower asks the primary every 100 ms), or at the end (`force`). On the writer
// thread, or after it ended.
void Recorder::writeClock(std::int64_t nowNs, bool force) {
  constexpr std::int64_t kEveryNs = 100'000'000;
  if (!clock_ || writeFailed_ || (!force && nowNs - clockLookedNs_ < kEveryNs)) return;
  clockLookedNs_ = nowNs;
  const auto clock = clock_(nowNs);
  if (!clock || (clockWritten_ && clockWritten_->offsetNs == clock->offsetNs &&
                 clockWritten_->uncertaintyNs == clock->uncertaintyNs && clockWritten_->peerSoc == clock->peerSoc))
    return;
  if (auto ok = file_.append(ChunkType::kClockOffset, *clock); !ok) {
    writeFailed_ = true;
    writeError_ = ok.error();
    return;
  }
  clockWritten_ = clock;
}

// Releases and schedule switches, from the drain (the master's monitor loop, not a release thread).
void Recorder::Tap::see(const EventRecord* records, std::size_t count) {
  for (std::size_t k = 0; k < count; ++k) {
    const EventRecord& r = records[k];
    const auto kind = static_cast<EventKind>(r.kind);
    if (kind == EventKind::kRelease) {
      tactus::record::ReleaseRecord rec{r.iteration, r.startNs, r.endNs, identifier_, r.instance, r.aux, 0};
      if (recorder_.ideal_) rec.idealNs = recorder_.ideal_(rec);
      recorder_.queueEvent(ChunkType::kRelease, &rec, sizeof rec);
    } else if (kind == EventKind::kScheduleStart || kind == EventKind::kScheduleStop) {
      const bool start = kind == EventKind::kScheduleStart;
      const tactus::record::SwitchRecord rec{r.iteration, r.endNs, start ? r.aux : r.schedule,
                                             start ? r.schedule : r.aux};
      recorder_.queueEvent(ChunkType::kSwitch, &rec, sizeof rec);
    }
  }
}

Result<void> Recorder::finish(int exitCode, std::int64_t endNs) {
  {
    const std::lock_guard<std::mutex> guard(lock_);
    finished_ = true;
  }
  stop_.store(true, std::memory_order_release);
  if (copier_.joinable()) copier_.join();
  if (writer_.joinable()) writer_.join();
  if (!writing_) return {};
  writeClock(endNs, true);
  if (writeFailed_) return writeError_;
  const tactus::record::EndRecord end{endNs, versions(), lost(), static_cast<std::uint32_t>(exitCode), 0};
  if (auto ok = file_.append(ChunkType::kEnd, end); !ok) return ok.error();
  if (auto ok = file_.sync(); !ok) return ok.error();
  file_.close();
  return {};
}

std::string Recorder::lossText() const {
  std::string out;
  for (std::size_t r = 1; r < 5; ++r) {
    const std::uint64_t n = losses_.byReason[r].load(std::memory_order_relaxed);
    if (n > 0) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + lossName(r);
  }
  return out;
}

}  // namespace tactus::master::record
