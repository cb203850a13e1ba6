// STAND-IN, NOT A DLA OR PVA: this machine has neither, so the engine-queue tests drive this
// thread-backed in-order queue through tactus's engine-neutral adapter (<tactus/engine_queue.hpp>).
// Its thread runs the queued operations one after another, as an engine's queue would: "wait
// until *fence >= V" (polls the word; the calling thread never waits), "*fence = V" (a release
// store) and a fake kernel (records its start and end and sleeps its length).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tactus/engine_queue.hpp"

namespace tactus::test {

class StandinQueue {
 public:
  /// A fake kernel's run, for the test's order checks.
  struct Work {
    std::string name;
    std::uint64_t iteration = 0;
    std::int64_t startNs = 0, endNs = 0;
  };

  StandinQueue() : thread_([this] { run(); }) {}
  StandinQueue(const StandinQueue&) = delete;
  StandinQueue& operator=(const StandinQueue&) = delete;
  ~StandinQueue() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    thread_.join();
  }

  /// The adapter tactus calls; `dropSignals` leaves out every signal (a broken adapter, for the
  /// test that a run without the queue's completions fails rather than passes).
  EngineQueueAdapter adapter(bool dropSignals = false) {
    dropSignals_ = dropSignals;
    return {this, &StandinQueue::waitValue, &StandinQueue::signalValue};
  }

  /// Enqueues a fake kernel of `lengthUs`.
  void enqueueWork(const std::string& name, std::uint64_t iteration, std::int64_t lengthUs) {
    push({Op::kWork, nullptr, 0, name, iteration, lengthUs});
  }

  std::uint64_t waits() const { return waits_.load(); }
  std::uint64_t signals() const { return signals_.load(); }
  /// The fake kernels that ran, in queue order (after the queue drained).
  std::vector<Work> done() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return done_;
  }
  /// Waits (at most `timeoutMs`) until every queued operation ran; false on time-out.
  bool drain(int timeoutMs) {
    std::unique_lock<std::mutex> lock(mutex_);
    return idle_.wait_for(lock, std::chrono::milliseconds(timeoutMs), [this] { return ops_.empty() && !busy_; });
  }

 private:
  enum class Op { kWait, kSignal, kWork };
  struct Item {
    Op op;
    volatile std::uint64_t* fence;
    std::uint64_t value;
    std::string name;
    std::uint64_t iteration;
    std::int64_t lengthUs;
  };

  static std::int64_t nowNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }

  static int waitValue(void* context, void* queue, const volatile std::uint64_t* fence, std::uint64_t value) {
    auto* self = static_cast<StandinQueue*>(context);
    if (queue != self) return 22;  // not this queue: EINVAL
    self->waits_.fetch_add(1);
    self->push({Op::kWait, const_cast<volatile std::uint64_t*>(fence), value, {}, 0, 0});
    return 0;
  }
  static int signalValue(void* context, void* queue, volatile std::uint64_t* fence, std::uint64_t value) {
    auto* self = static_cast<StandinQueue*>(context);
    if (queue != self) return 22;
    self->signals_.fetch_add(1);
    if (!self->dropSignals_) self->push({Op::kSignal, fence, value, {}, 0, 0});
    return 0;
  }

  void push(Item item) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      ops_.push_back(std::move(item));
    }
    ready_.notify_one();
  }

  // The queue's thread: one operation at a time, in order.
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return stop_ || !ops_.empty(); });
      if (ops_.empty()) return;  // stopped, nothing left
      Item item = std::move(ops_.front());
      ops_.pop_front();
      busy_ = true;
      lock.unlock();
      const bool ok = execute(item);
      lock.lock();
      busy_ = false;
      if (!ok) return;  // stopped inside a wait
      if (ops_.empty()) idle_.notify_all();
    }
  }

  bool execute(const Item& item) {
    switch (item.op) {
      case Op::kWait: {
        std::atomic_ref<std::uint64_t> word(*const_cast<std::uint64_t*>(item.fence));
        while (word.load(std::memory_order_acquire) < item.value) {
          {
            const std::lock_guard<std::mutex> lock(mutex_);
            if (stop_) return false;
          }
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
        return true;
      }
      case Op::kSignal:
        std::atomic_ref<std::uint64_t>(*const_cast<std::uint64_t*>(item.fence))
            .store(item.value, std::memory_order_release);
        return true;
      case Op::kWork: {
        Work w{item.name, item.iteration, nowNs(), 0};
        std::this_thread::sleep_for(std::chrono::microseconds(item.lengthUs));
        w.endNs = nowNs();
        const std::lock_guard<std::mutex> lock(mutex_);
        done_.push_back(std::move(w));
        return true;
      }
    }
    return true;
  }

  std::mutex mutex_;
  std::condition_variable ready_, idle_;
  std::deque<Item> ops_;    // guarded by mutex_
  std::vector<Work> done_;  // guarded by mutex_
  bool stop_ = false;       // guarded by mutex_
  bool busy_ = false;       // guarded by mutex_
  bool dropSignals_ = false;
  std::atomic<std::uint64_t> waits_{0}, signals_{0};
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace tactus::test
