// The switch job (switch_job.hpp): the switch thread and the states of the request it answers.
#include "managed/switch_job.hpp"

#include "tactus/ipc/futex.hpp"
#include "tactus/ipc/wait.hpp"

namespace tactus::master {

const char* switchStateName(SwitchState state) {
  switch (state) {
    case SwitchState::kIdle: return "idle";
    case SwitchState::kRequested: return "requested";
    case SwitchState::kDraining: return "draining";
    case SwitchState::kWaitingForClients: return "waiting for clients";
    case SwitchState::kPublishing: return "publishing";
    case SwitchState::kDone: return "done";
    case SwitchState::kFailed: return "failed";
  }
  return "unknown";
}

SwitchJob::SwitchJob(std::function<Answer(SwitchJob&, const Request&)> handle, std::function<void()> answered)
    : handle_(std::move(handle)), answered_(std::move(answered)) {}

SwitchJob::~SwitchJob() { stop(); }

bool SwitchJob::inFlight() const {
  const SwitchState s = state();
  return s == SwitchState::kRequested || s == SwitchState::kDraining || s == SwitchState::kWaitingForClients;
}

bool SwitchJob::answerPending() const { return inFlight() || state() == SwitchState::kPublishing; }

void SwitchJob::launch(const Request& r) {
  request_ = r;
  answer_ = Answer{};
  state_.store(SwitchState::kRequested, std::memory_order_release);
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  {
    std::lock_guard<std::mutex> lock(lock_);
    job_ = r;
  }
  ready_.notify_one();
}

std::optional<std::pair<Request, Answer>> SwitchJob::takeAnswer() {
  if (state() != SwitchState::kPublishing) return std::nullopt;
  state_.store(answer_.code == shm::ManagerResult::kOk ? SwitchState::kDone : SwitchState::kFailed,
               std::memory_order_release);
  return std::make_pair(request_, answer_);
}

SwitchWait SwitchJob::waitingOn() const {
  std::lock_guard<std::mutex> lock(waitLock_);
  return wait_;
}

void SwitchJob::enter(SwitchState state, const Mode* mode, HyperepochId he, bool acks) {
  {
    std::lock_guard<std::mutex> lock(waitLock_);
    wait_ = SwitchWait{state, mode, he, acks};
  }
  state_.store(state, std::memory_order_release);
}

void SwitchJob::beginPairs(std::vector<std::pair<HyperepochId, HyperepochId>> pairs) {
  pairs_ = std::move(pairs);
  pairsOk_.store(true);
  pairsDone_.store(0, std::memory_order_seq_cst);
}

void SwitchJob::pairSwitched(bool ok) {
  if (!ok) pairsOk_.store(false);
  pairsDone_.fetch_add(1, std::memory_order_seq_cst);  // pairs report from several threads: an add, not a store
  if (pairsWaiters_.load(std::memory_order_seq_cst) != 0) ipc::futexWake(pairsDone_);
}

bool SwitchJob::awaitPairs() {
  // Every pair reports, switched or cut short by the run's end (its release thread then leaves at
  // the abort): no early return, the pairs refer to the job.
  (void)ipc::waitForSequence(pairsDone_, pairsWaiters_, static_cast<std::uint32_t>(pairs_.size()), 0,
                             [] { return false; });
  return pairsOk_.load();
}

void SwitchJob::loop() {
  std::unique_lock<std::mutex> lock(lock_);
  for (;;) {
    ready_.wait(lock, [this] { return job_.has_value() || quit_; });
    if (!job_) return;
    const Request r = *job_;
    job_.reset();
    lock.unlock();
    Answer answer = handle_(*this, r);
    {
      std::lock_guard<std::mutex> waitLock(waitLock_);
      wait_ = SwitchWait{};
    }
    answer_ = std::move(answer);
    state_.store(SwitchState::kPublishing, std::memory_order_release);
    answered_();
    lock.lock();
  }
}

void SwitchJob::stop() {
  {
    std::lock_guard<std::mutex> lock(lock_);
    quit_ = true;
  }
  ready_.notify_one();
  if (thread_.joinable()) thread_.join();
}

}  // namespace tactus::master
