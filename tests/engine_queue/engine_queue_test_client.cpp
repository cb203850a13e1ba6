// tactus-engine-queue-test-client: a client whose submitters put fake kernels on a STAND-IN DLA
// queue (standin_queue.hpp; this machine has no DLA or PVA) registered through tactus's
// engine-neutral adapter, for tests/engine_queue. Every other runnable of the client sleeps.
//
//   --name N --instance I --trace PATH   client, instance, where the runs go ("name iteration start end")
//   --queue NAME                          register a stand-in queue of its own as DLA_HANDLE/PVA_STREAM NAME
//   --submit RUNNABLE=WORK:US[@QUEUE]     RUNNABLE enqueues the fake kernel WORK of US microseconds
//                                         on QUEUE (default: the first --queue)
//   --sleep RUNNABLE=US                   RUNNABLE sleeps US microseconds (default 200)
//   --c-api                               register through <tactus/stm.h> (tactusRegisterEngineQueue)
//   --drop-signals                        the adapter drops every signal (a broken adapter)
//   --misuse                              try the registration's refusals first, print them
// Prints `status=...`, `message=...`, `adapter waits=W signals=S` (all queues together) and
// `library waits=W signals=S submissions=N`; exits 0 when the run ended by its frame limit, else 4.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "standin_queue.hpp"
#include "tactus/client.hpp"
#include "tactus/engine_queue.hpp"
#include "tactus/stm.h"

namespace {

struct Options {
  std::string name, instance, trace;
  std::vector<std::string> queues;
  struct Submit {
    std::string work;
    std::int64_t us = 0;
    std::string queue;  // "": the first
  };
  std::map<std::string, Submit> submits;
  std::map<std::string, std::int64_t> sleeps;
  bool cApi = false, dropSignals = false, misuse = false;
};

std::int64_t nowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::mutex gTraceMutex;
std::vector<std::string> gTrace;                                             // guarded by gTraceMutex
std::map<std::string, std::unique_ptr<tactus::test::StandinQueue>> gQueues;  // by resource name

struct Runnable {
  std::string name;
  std::string work;  // non-empty: a submitter of this fake kernel
  std::int64_t us = 200;
  tactus::test::StandinQueue* queue = nullptr;  // a submitter's
};

std::uint64_t iteration() {
  auto info = tactus::runtimeInfo();
  return info ? info->hyperepochIteration : 0;
}

void body(void* userdata) {
  const auto* r = static_cast<const Runnable*>(userdata);
  const std::uint64_t h = iteration();
  const std::int64_t start = nowNs();
  if (!r->work.empty()) {
    r->queue->enqueueWork(r->work, h, r->us);  // returns at once: the queue runs it
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(r->us));
  }
  const std::int64_t end = nowNs();
  const std::lock_guard<std::mutex> lock(gTraceMutex);
  gTrace.push_back(r->name + " " + std::to_string(h) + " " + std::to_string(start) + " " + std::to_string(end));
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--name") o.name = next();
    else if (a == "--instance") o.instance = next();
    else if (a == "--trace") o.trace = next();
    else if (a == "--queue") o.queues.push_back(next());
    else if (a == "--c-api") o.cApi = true;
    else if (a == "--drop-signals") o.dropSignals = true;
    else if (a == "--misuse") o.misuse = true;
    else if (a == "--submit" || a == "--sleep") {
      const std::string v = next();
      const auto eq = v.find('=');
      const std::string runnable = v.substr(0, eq);
      if (a == "--sleep") {
        o.sleeps[runnable] = std::stoll(v.substr(eq + 1));
      } else {
        const auto colon = v.find(':', eq);
        const auto at = v.find('@', colon);
        o.submits[runnable] = {v.substr(eq + 1, colon - eq - 1), std::stoll(v.substr(colon + 1, at - colon - 1)),
                               at == std::string::npos ? std::string() : v.substr(at + 1)};
      }
    }
  }
  return o;
}

int noWait(void*, void*, const volatile std::uint64_t*, std::uint64_t) { return 0; }
int noSignal(void*, void*, volatile std::uint64_t*, std::uint64_t) { return 0; }

// The registration's refusals, each printed as `label: error`.
void tryMisuse(const std::string& queueName) {
  auto show = [](const char* label, const tactus::Result<void>& r) {
    std::printf("%s: %s\n", label,
                r ? "ok" : (std::string(tactus::errorCodeName(r.error().code)) + ": " + r.error().message).c_str());
  };
  int other = 0;
  show("null-queue", tactus::registerEngineQueue(queueName, nullptr, {nullptr, &noWait, &noSignal}));
  show("null-function", tactus::registerEngineQueue(queueName, &other, {nullptr, nullptr, &noSignal}));
  show("unknown-name", tactus::registerEngineQueue("NO_SUCH_QUEUE", &other, {nullptr, &noWait, &noSignal}));
  show("cpu-name", tactus::registerEngineQueue("CPU0", &other, {nullptr, &noWait, &noSignal}));
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  for (const std::string& q : o.queues) gQueues[q] = std::make_unique<tactus::test::StandinQueue>();
  std::vector<std::unique_ptr<Runnable>> runnables;
  bool registered = true;
  if (o.cApi) {
    ::setenv("TACTUS_INSTANCE", o.instance.c_str(), 1);
    if (stmClientInit(o.name.c_str()) != STM_SUCCESS) {
      std::printf("init failed: %s\n", tactusLastErrorMessage());
      return 3;
    }
  } else if (auto ok = tactus::init(o.name, {.instance = o.instance, .timeoutMs = 30'000}); !ok) {
    std::printf("init failed: %s\n", ok.error().message.c_str());
    return 3;
  }
  if (o.misuse && !o.queues.empty()) tryMisuse(o.queues.front());
  for (const std::string& q : o.queues) {
    tactus::test::StandinQueue* queue = gQueues[q].get();
    const tactus::EngineQueueAdapter adapter = queue->adapter(o.dropSignals);
    if (o.cApi) {
      const tactusEngineQueueAdapter_t c{adapter.context, adapter.waitValue, adapter.signalValue};
      const stmErrorCode_t code = tactusRegisterEngineQueue(q.c_str(), queue, &c);
      std::printf("register %s: %s\n", q.c_str(), stmErrorCodeToString(code));
      registered = registered && code == STM_SUCCESS;
    } else {
      const auto ok = tactus::registerEngineQueue(q, queue, adapter);
      std::printf("register %s: %s\n", q.c_str(), ok ? "ok" : ok.error().message.c_str());
      registered = registered && static_cast<bool>(ok);
    }
  }
  if (o.misuse && o.queues.size() >= 2) {
    tactus::test::StandinQueue* first = gQueues[o.queues[0]].get();
    auto show = [](const char* label, const tactus::Result<void>& r) {
      std::printf("%s: %s\n", label, r ? "ok" : tactus::errorCodeName(r.error().code));
    };
    tactus::test::StandinQueue spare;
    show("same-name-twice", tactus::registerEngineQueue(o.queues[0], &spare, spare.adapter()));
    show("same-queue-twice", tactus::registerEngineQueue(o.queues[1], first, first->adapter()));
  }
  auto names = tactus::scheduledRunnables();
  if (!names || !registered) return 3;
  for (const std::string& n : *names) {
    auto r = std::make_unique<Runnable>();
    r->name = n;
    if (auto s = o.submits.find(n); s != o.submits.end()) {
      r->work = s->second.work;
      r->us = s->second.us;
      const std::string queue = s->second.queue.empty() && !o.queues.empty() ? o.queues.front() : s->second.queue;
      if (gQueues.count(queue) == 0) return 3;  // a submitter without a queue to put its work on
      r->queue = gQueues[queue].get();
    } else if (auto sl = o.sleeps.find(n); sl != o.sleeps.end()) {
      r->us = sl->second;
    }
    const bool ok = o.cApi ? stmRegisterCpuRunnable(&body, n.c_str(), r.get()) == STM_SUCCESS
                           : static_cast<bool>(tactus::registerRunnable(n, &body, r.get()));
    if (!ok) return 3;
    runnables.push_back(std::move(r));
  }
  std::fflush(stdout);
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  bool drained = true;
  std::uint64_t waits = 0, signals = 0;
  for (auto& [name, queue] : gQueues) {
    drained = queue->drain(10'000) && drained;
    waits += queue->waits();
    signals += queue->signals();
  }
  std::printf("status=%s\nmessage=%s\n", tactus::runStatusName(outcome.status), outcome.message.c_str());
  std::printf("drained=%d\n", drained ? 1 : 0);
  std::printf("adapter waits=%llu signals=%llu\n", static_cast<unsigned long long>(waits),
              static_cast<unsigned long long>(signals));
  const tactus::EngineQueueStats stats = tactus::engineQueueStats();
  std::printf("library waits=%llu signals=%llu submissions=%llu\n", static_cast<unsigned long long>(stats.waits),
              static_cast<unsigned long long>(stats.signals), static_cast<unsigned long long>(stats.submissions));
  std::ofstream trace(o.trace);
  for (const std::string& line : gTrace) trace << line << "\n";
  for (auto& [name, queue] : gQueues) {
    for (const auto& w : queue->done()) {
      trace << "work:" << w.name << " " << w.iteration << " " << w.startNs << " " << w.endNs << "\n";
    }
  }
  gQueues.clear();
  if (o.cApi) stmClientExit();
  else tactus::shutdown();
  return outcome.status == tactus::RunStatus::kFrameLimit ? 0 : 4;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 3;
  }
}
