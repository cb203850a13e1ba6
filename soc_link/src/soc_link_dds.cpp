// The link over Eclipse Cyclone DDS (protocol version 2): topics `tactus_v2_runnable_end`
// (reliable, keep last 64 per instance; keyed by schedule, runnable and frame, the iteration in the
// sample) and `tactus_v2_master_state` (reliable, keep last; keyed by schedule and SoC; automatic
// liveliness leased for -o, so a vanished master's instance goes not-alive),
// `tactus_v2_frame_release` (reliable, keep last 64 per hyperepoch: the primary's iteration
// starts) and `tactus_v2_clock_probe` (best effort, keep last; keyed by schedule and asking SoC: the
// two-way clock exchange). Discovery, interfaces and peers come from Cyclone's configuration
// (CYCLONEDDS_URI).
//
// The run's identity: the primary's link draws a nonce at open; a follower's link adopts the nonce
// of the primary's first ready state it hears (never that of a running or stopping primary: that
// is an older run, a follower restarted while its old primary lingers). Every sample carries it,
// and each reader drops the samples of any other run (and a follower all samples until it has
// adopted one): a master restarted over a killed one never takes the old run's ends, releases or
// failure (the survivor's stopping state) for its own.
#include <dds/dds.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "soc_topics.h"
#include "tactus/soc_link/soc_link.hpp"

namespace tactus::soc_link {
namespace {

std::int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// PeerState::state of a master that announced the end of its run, and of one that waits to start.
constexpr std::uint32_t kPeerStopping = 3;
constexpr std::uint32_t kPeerReady = 1;

// A run identity no other run of these masters draws: the kernel's random bytes, else (no
// getrandom) the clock and the pid mixed; never 0 (0: not known yet).
std::uint64_t drawRunNonce() {
  std::uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof nonce)) {
    nonce = static_cast<std::uint64_t>(monotonicNs()) * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(getpid());
  }
  return nonce != 0 ? nonce : 1;
}

// Ends kept per instance (schedule, runnable, frame): one per hyperepoch iteration, so a receiver
// would have to fall this many iterations behind to lose one. Measured with bench/multisoc
// link-handoff on loopback: keep-all gave a p99 of 1.3 ms (the ping-pong's: 0.07 ms), and one
// instance per end (the iteration in the key, unregistered after each write) a p50 of 2.5x.
constexpr std::int32_t kEndDepth = 64;

Error ddsError(const char* what, dds_return_t rc) {
  return fail(ErrorCode::kIo, std::string("dds: ") + what + ": " + dds_strretcode(rc));
}

// Samples of one reader handed to a handler as they arrive, on Cyclone's receiving thread: a
// data-available listener that takes them (no thread of ours to wake on the path). Every take runs
// under `mutex` (the listener's and start's first), so the samples of one key reach the handler in
// the order they were taken; the lock comes first in the listener's call, so that ThreadSanitizer,
// which cannot see libddsc's own ordering, sees start's writes before the call's reads. What a take
// writes to the link (the primary's clock answers) it returns, to be written after the lock is
// released: a write is delivered to the readers that match it on the writing thread, so no write
// happens under a lock a listener takes (the links of one process ignore each other: init).
template <typename Sample>
struct Delivery {
  using Then = std::function<void()>;
  std::function<void(const Sample&)> handler;
  std::function<Then()> take;  // takes what waits and hands it to `handler`; under `mutex`
  std::mutex mutex;
  dds_entity_t reader = 0;
  dds_listener_t* listener = nullptr;

  void takeLocked() {
    Then then;
    {
      const std::lock_guard<std::mutex> hold(mutex);
      if (take && handler) then = take();
    }
    if (then) then();
  }

  Result<void> start(std::function<void(const Sample&)> to, dds_entity_t from, const char* what,
                     std::function<Then()> taker) {
    if (listener != nullptr) return fail(ErrorCode::kInvalidState, std::string("the link already delivers ") + what);
    {
      const std::lock_guard<std::mutex> hold(mutex);
      handler = std::move(to);
      take = std::move(taker);
    }
    reader = from;
    listener = dds_create_listener(this);
    dds_lset_data_available(listener, [](dds_entity_t, void* self) { static_cast<Delivery*>(self)->takeLocked(); });
    if (dds_return_t rc = dds_set_listener(reader, listener); rc < 0) {
      dds_delete_listener(listener);  // a later call may try again
      listener = nullptr;
      return ddsError("set listener", rc);
    }
    takeLocked();  // what arrived before the listener was set
    return {};
  }

  Result<void> stop() {
    if (listener == nullptr) return {};
    if (dds_return_t rc = dds_set_listener(reader, nullptr); rc < 0) return ddsError("remove listener", rc);
    dds_delete_listener(listener);
    listener = nullptr;
    // Under the lock: dds_set_listener has waited for a call in progress, but inside libddsc,
    // where TSan cannot see it; the lock says the same to TSan.
    const std::lock_guard<std::mutex> hold(mutex);
    handler = nullptr;
    return {};
  }
};

// The domains this process created, by id, with the links that use each: a process with several
// links (a managed multi-SoC master has one per schedule) creates a domain once and deletes it with
// its last link (Cyclone refuses a second dds_create_domain of an id, and deleting the domain
// deletes every participant in it, another link's too).
struct DomainUse {
  dds_entity_t entity = 0;  // 0: not created here (made implicitly by the first participant)
  int links = 0;
};
std::mutex gDomainLock;
std::map<dds_domainid_t, DomainUse> gDomains;

class DdsLink final : public Link {
 public:
  explicit DdsLink(const LinkOptions& o) : o_(o), run_(o.soc == o.primary ? drawRunNonce() : 0) {}
  ~DdsLink() override {
    (void)ends_.stop();
    (void)releases_.stop();
    (void)clock_.stop();
    if (participant_ > 0) dds_delete(participant_);
    releaseDomain();
  }

  Result<void> deliverEnds(std::function<void(const RemoteEnd&)> handler) override {
    if (!handler) return ends_.stop();
    return ends_.start(std::move(handler), endReader_, "runnable ends", [this] {
      deliverTakenEnds();
      return Delivery<RemoteEnd>::Then{};
    });
  }

  Result<void> deliverReleases(std::function<void(const RemoteRelease&)> handler) override {
    if (!handler) return releases_.stop();
    return releases_.start(std::move(handler), releaseReader_, "frame releases", [this] {
      deliverTakenReleases();
      return Delivery<RemoteRelease>::Then{};
    });
  }

  Result<void> deliverClock(std::function<void(const ClockAnswer&)> handler) override {
    if (!handler) return clock_.stop();
    return clock_.start(std::move(handler), probeReader_, "clock answers", [this] { return answerOrDeliverClock(); });
  }

  Result<void> askClock(std::uint64_t seq) override {
    tactus_dds_ClockProbe s{};
    s.schedule = o_.schedule;
    s.soc = o_.soc;
    s.run = run_.load(std::memory_order_acquire);
    s.seq = seq;
    s.askedNs = static_cast<std::uint64_t>(monotonicNs());
    if (dds_return_t rc = dds_write(probeWriter_, &s); rc < 0) return ddsError("write clock question", rc);
    return {};
  }

  void releaseDomain() {
    if (!domainHeld_) return;
    domainHeld_ = false;
    const std::lock_guard<std::mutex> hold(gDomainLock);
    const auto at = gDomains.find(static_cast<dds_domainid_t>(o_.domain));
    if (at == gDomains.end() || --at->second.links > 0) return;
    if (at->second.entity > 0) dds_delete(at->second.entity);
    gDomains.erase(at);
  }

  Result<void> init() {
    // The domain, with tactus's defaults for two of Cyclone's waits on a peer that is gone:
    // - the participant lease (Discovery/LeaseDuration, 10 s by default) is -o, the time after
    //   which a silent master is gone for this run too: with Cyclone's own, a peer that died
    //   stayed matched for 10 s, so this master's last announcement waited for its
    //   acknowledgement until its time ran out, and the survivor exited 1.7 s after the kill with
    //   -o 0.5 s (2.8 s under a manager: a link per schedule); 0.52-0.57 s with this;
    // - how long a deleted writer waits for its readers' acknowledgements
    //   (Internal/WriterLingerDuration, 1 s by default): 100 ms (a live peer on a link
    //   acknowledges within a round trip).
    // The user's configuration (CYCLONEDDS_URI) comes after this fragment, so a value set there
    // wins. Created already (another link of this process, with the same -o): used as it is.
    std::string config = "<CycloneDDS><Domain Id=\"any\"><Discovery><LeaseDuration>" +
                         std::to_string(o_.livelinessNs / 1000) +
                         "us</LeaseDuration></Discovery><Internal><WriterLingerDuration>100ms</WriterLingerDuration>"
                         "</Internal></Domain></CycloneDDS>";
    if (const char* uri = std::getenv("CYCLONEDDS_URI"); uri != nullptr && *uri != '\0')
      config += std::string(",") + uri;
    {
      const std::lock_guard<std::mutex> hold(gDomainLock);
      DomainUse& use = gDomains[static_cast<dds_domainid_t>(o_.domain)];
      if (use.links == 0) {
        const dds_entity_t domain = dds_create_domain(static_cast<dds_domainid_t>(o_.domain), config.c_str());
        if (domain < 0 && domain != DDS_RETCODE_PRECONDITION_NOT_MET) {
          gDomains.erase(static_cast<dds_domainid_t>(o_.domain));
          return ddsError("create domain", domain);
        }
        use.entity = domain > 0 ? domain : 0;
      }
      ++use.links;
      domainHeld_ = true;
    }
    participant_ = dds_create_participant(static_cast<dds_domainid_t>(o_.domain), nullptr, nullptr);
    if (participant_ < 0) return ddsError("create participant", participant_);
    dds_qos_t* qos = dds_create_qos();
    dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, kEndDepth);
    // Readers take what other processes (the other SoCs' masters) wrote: not their own, nor that
    // of the other links of this process (a managed multi-SoC master has one per schedule), whose
    // samples are another schedule's. Cyclone would deliver those on the writing thread, into this
    // link's listeners: a primary's clock answer written from one link's listener could reach the
    // other link's listener, whose answer came back into the first one's, waiting for itself.
    dds_qset_ignorelocal(qos, DDS_IGNORELOCAL_PROCESS);
    if (auto ok = topicPair(&tactus_dds_RunnableEnd_desc, "tactus_v2_runnable_end", qos, endWriter_, endReader_); !ok)
      return done(qos, ok.error());
    // Master states: the newest per SoC, and the writer's liveliness leased for -o.
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 1);
    dds_qset_liveliness(qos, DDS_LIVELINESS_AUTOMATIC, static_cast<dds_duration_t>(o_.livelinessNs));
    // Frame releases: the same lease; a follower lagging 64 iterations behind would lose one.
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, kEndDepth);
    if (auto ok =
            topicPair(&tactus_dds_FrameRelease_desc, "tactus_v2_frame_release", qos, releaseWriter_, releaseReader_);
        !ok)
      return done(qos, ok.error());
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 1);
    if (auto ok = topicPair(&tactus_dds_MasterState_desc, "tactus_v2_master_state", qos, stateWriter_, stateReader_);
        !ok)
      return done(qos, ok.error());
    // Clock questions and answers: best effort (a lost one is one estimate less; a resent one
    // would carry a stale time), the newest per asking SoC.
    dds_qset_reliability(qos, DDS_RELIABILITY_BEST_EFFORT, 0);
    if (auto ok = topicPair(&tactus_dds_ClockProbe_desc, "tactus_v2_clock_probe", qos, probeWriter_, probeReader_); !ok)
      return done(qos, ok.error());
    dds_delete_qos(qos);
    waitset_ = dds_create_waitset(participant_);
    if (waitset_ < 0) return ddsError("create waitset", waitset_);
    dds_entity_t cond = dds_create_readcondition(endReader_, DDS_ANY_STATE);
    if (cond < 0) return ddsError("create read condition", cond);
    if (dds_return_t rc = dds_waitset_attach(waitset_, cond, 0); rc < 0) return ddsError("attach", rc);
    return {};
  }

  Result<void> publishRelease(std::uint32_t hyperepoch, std::uint64_t iteration, std::int64_t releaseNs,
                              std::uint64_t stopAfter) override {
    tactus_dds_FrameRelease s{};
    s.schedule = o_.schedule;
    s.hyperepoch = hyperepoch;
    s.run = run_.load(std::memory_order_acquire);
    s.iteration = iteration;
    s.releaseNs = static_cast<std::uint64_t>(releaseNs);
    s.stopAfter = stopAfter;
    s.sentNs = static_cast<std::uint64_t>(monotonicNs());
    if (dds_return_t rc = dds_write(releaseWriter_, &s); rc < 0) return ddsError("write frame release", rc);
    return {};
  }

  std::uint32_t releaseWriterMatches() override {
    dds_publication_matched_status_t pub{};
    if (dds_get_publication_matched_status(releaseWriter_, &pub) < 0) return 0;
    return pub.current_count;
  }

  std::uint32_t releaseReaderMatches() override {
    dds_subscription_matched_status_t sub{};
    if (dds_get_subscription_matched_status(releaseReader_, &sub) < 0) return 0;
    return sub.current_count;
  }

  Result<void> publishEnd(std::uint64_t iteration, std::uint32_t frame, std::uint32_t runnable,
                          std::int64_t endNs) override {
    tactus_dds_RunnableEnd s{};
    s.schedule = o_.schedule;
    s.run = run_.load(std::memory_order_acquire);
    s.iteration = iteration;
    s.frame = frame;
    s.runnable = runnable;
    s.endNs = static_cast<std::uint64_t>(endNs);
    if (dds_return_t rc = dds_write(endWriter_, &s); rc < 0) return ddsError("write runnable end", rc);

    return {};
  }

  Result<std::vector<RemoteEnd>> takeEnds(std::int64_t timeoutNs) override {
    std::vector<RemoteEnd> out;
    const std::int64_t until = monotonicNs() + std::max<std::int64_t>(timeoutNs, 0);
    for (;;) {
      tactus_dds_RunnableEnd buf[16];
      void* samples[16];
      dds_sample_info_t info[16];
      for (int k = 0; k < 16; ++k) samples[k] = &buf[k];
      dds_return_t n = dds_take(endReader_, samples, info, 16, 16);
      if (n < 0) return ddsError("take runnable ends", n);
      for (int k = 0; k < n; ++k) {
        if (!info[k].valid_data || buf[k].schedule != o_.schedule || !ourRun(buf[k].run)) continue;
        out.push_back({buf[k].iteration, buf[k].frame, buf[k].runnable, static_cast<std::int64_t>(buf[k].endNs)});
      }
      if (n == 16) continue;
      if (!out.empty()) return out;
      const std::int64_t left = until - monotonicNs();
      if (left <= 0) return out;
      dds_return_t w = dds_waitset_wait(waitset_, nullptr, 0, left);
      if (w < 0) return ddsError("wait", w);
      if (w == 0) return out;
    }
  }

  Result<void> announce(std::uint32_t state, std::int32_t status, const std::string& message) override {
    tactus_dds_MasterState s{};
    s.schedule = o_.schedule;
    s.soc = o_.soc;
    s.run = run_.load(std::memory_order_acquire);
    s.primary = o_.primary;
    s.state = state;
    s.status = status;
    std::strncpy(s.message, message.c_str(), sizeof s.message - 1);
    s.sentNs = static_cast<std::uint64_t>(monotonicNs());
    if (dds_return_t rc = dds_write(stateWriter_, &s); rc < 0) return ddsError("write master state", rc);
    return {};
  }

  bool awaitStateAcks(std::int64_t timeoutNs) override {
    const std::int64_t until = monotonicNs() + std::max<std::int64_t>(timeoutNs, 0);
    // In slices, each asking again who is still to hear it: a peer whose run ended (it announced
    // its own stopping state) or that was lost needs no last word, and Cyclone's wait for acks does
    // not end when a reader goes away (a peer that ended first held this wait for its whole time).
    constexpr std::int64_t kSliceNs = 10'000'000;
    for (;;) {
      pollStates();
      std::uint32_t listening = 0;
      for (const PeerState& p : peers_) listening += p.alive && p.state != kPeerStopping ? 1 : 0;
      if (listening == 0) return true;
      dds_publication_matched_status_t pub{};
      if (dds_get_publication_matched_status(stateWriter_, &pub) < 0) return false;
      const std::int64_t left = until - monotonicNs();
      if (left <= 0) return false;
      if (pub.current_count >= listening && dds_wait_for_acks(stateWriter_, std::min(left, kSliceNs)) == DDS_RETCODE_OK)
        return true;
      if (pub.current_count < listening) {
        timespec pause{0, 1'000'000};
        nanosleep(&pause, nullptr);
      }
    }
  }

  std::vector<std::uint32_t> aliveSocs() override {
    pollStates();
    std::vector<std::uint32_t> out;
    for (std::uint32_t k = 0; k < alive_.size(); ++k)
      if (alive_[k]) out.push_back(k);
    return out;
  }

  std::uint32_t matchedPeers() override {
    dds_publication_matched_status_t pub{};
    dds_subscription_matched_status_t sub{};
    if (dds_get_publication_matched_status(endWriter_, &pub) < 0) return 0;
    if (dds_get_subscription_matched_status(endReader_, &sub) < 0) return 0;
    return std::min(pub.current_count, sub.current_count);
  }

  std::optional<std::uint32_t> lostSoc() override {
    pollStates();
    return lost_;
  }

  std::uint64_t runId() override {
    pollStates();
    return run_.load(std::memory_order_acquire);
  }

  std::vector<PeerState> peers() override {
    pollStates();
    std::vector<PeerState> out;
    for (const PeerState& p : peers_)
      if (p.state != 0 || p.lost) out.push_back(p);
    return out;
  }

 private:
  // Takes every sample waiting in `reader`, 16 at a time, and calls `each` with those of this
  // schedule.
  template <typename Sample, typename Each>
  void takeAll(dds_entity_t reader, Each&& each) {
    for (;;) {
      Sample buf[16];
      void* samples[16];
      dds_sample_info_t info[16];
      for (int k = 0; k < 16; ++k) samples[k] = &buf[k];
      const dds_return_t n = dds_take(reader, samples, info, 16, 16);
      for (int k = 0; k < n; ++k) {
        if (info[k].valid_data && buf[k].schedule == o_.schedule && ourRun(buf[k].run)) each(buf[k]);
      }
      if (n < 16) return;
    }
  }
  // Takes the waiting runnable ends and hands them to the ends' handler (under ends_.mutex).
  void deliverTakenEnds() {
    takeAll<tactus_dds_RunnableEnd>(endReader_, [this](const tactus_dds_RunnableEnd& s) {
      ends_.handler({s.iteration, s.frame, s.runnable, static_cast<std::int64_t>(s.endNs)});
    });
  }
  // Takes the waiting frame releases and hands them to the releases' handler (under releases_.mutex).
  void deliverTakenReleases() {
    takeAll<tactus_dds_FrameRelease>(releaseReader_, [this](const tactus_dds_FrameRelease& s) {
      releases_.handler({s.hyperepoch, s.iteration, static_cast<std::int64_t>(s.releaseNs),
                         static_cast<std::int64_t>(s.sentNs), monotonicNs(), s.stopAfter});
    });
  }
  // Takes the waiting clock samples (under clock_.mutex): a follower hands the answers to its own
  // questions to the handler; the primary answers every follower's question at once, in the
  // writing it returns (run after the lock is released, see Delivery).
  Delivery<ClockAnswer>::Then answerOrDeliverClock() {
    const bool primary = o_.soc == o_.primary;
    std::vector<tactus_dds_ClockProbe> answers;
    takeAll<tactus_dds_ClockProbe>(probeReader_, [&](const tactus_dds_ClockProbe& s) {
      const std::int64_t now = monotonicNs();
      const bool question = s.heardNs == 0 && s.answeredNs == 0;
      if (primary && question && s.soc != o_.soc) {
        tactus_dds_ClockProbe a = s;
        a.heardNs = static_cast<std::uint64_t>(now);
        answers.push_back(a);
      } else if (!primary && !question && s.soc == o_.soc) {
        clock_.handler({s.seq, static_cast<std::int64_t>(s.askedNs), static_cast<std::int64_t>(s.heardNs),
                        static_cast<std::int64_t>(s.answeredNs), now});
      }
    });
    if (answers.empty()) return {};
    return [this, answers = std::move(answers)]() mutable {
      for (tactus_dds_ClockProbe& a : answers) {
        a.answeredNs = static_cast<std::uint64_t>(monotonicNs());
        (void)dds_write(probeWriter_, &a);  // best effort, as the question was
      }
    };
  }
  // One topic of the participant and this link's writer and reader of it, all three with `qos`.
  Result<void> topicPair(const dds_topic_descriptor_t* descriptor, const char* name, const dds_qos_t* qos,
                         dds_entity_t& writer, dds_entity_t& reader) const {
    const dds_entity_t topic = dds_create_topic(participant_, descriptor, name, qos, nullptr);
    if (topic < 0) return ddsError("create topic", topic);
    writer = dds_create_writer(participant_, topic, qos, nullptr);
    if (writer < 0) return ddsError("create writer", writer);
    reader = dds_create_reader(participant_, topic, qos, nullptr);
    if (reader < 0) return ddsError("create reader", reader);
    return {};
  }
  Result<void> done(dds_qos_t* qos, Error e) {
    dds_delete_qos(qos);
    return e;
  }
  // Takes the master states (valid samples and the instance-state changes that a lost lease or a
  // closed link produces) into alive_ and lost_.
  void pollStates() {
    for (;;) {
      tactus_dds_MasterState buf[8];
      void* samples[8];
      dds_sample_info_t info[8];
      for (int k = 0; k < 8; ++k) samples[k] = &buf[k];
      dds_return_t n = dds_take(stateReader_, samples, info, 8, 8);
      if (n <= 0) return;
      for (int k = 0; k < n; ++k) {
        if (buf[k].schedule != o_.schedule || buf[k].soc == o_.soc || buf[k].soc >= 4096) continue;
        // Another run's state (a master of a run that ended or was killed, still there) is no
        // peer of this run (but see below); a follower adopts the run of the primary's first ready state. A change
        // of the instance's state (no valid data: no run to check) counts only for a peer that was
        // seen alive in this run.
        if (info[k].valid_data) {
          adoptRun(buf[k]);
          // A master that takes another SoC for the primary draws or adopts another run: its
          // state still counts, so that the disagreement is named (no older run of this one).
          if (!ourRun(buf[k].run) && buf[k].primary == o_.primary) continue;
        }
        const std::uint32_t soc = buf[k].soc;
        if (alive_.size() <= soc) alive_.resize(soc + 1, false);
        if (peers_.size() <= soc) {
          const auto from = static_cast<std::uint32_t>(peers_.size());
          peers_.resize(soc + 1);
          for (std::uint32_t s = from; s <= soc; ++s) peers_[s].soc = s;
        }
        PeerState& peer = peers_[soc];
        if (info[k].valid_data) {
          peer.state = buf[k].state;
          peer.primary = buf[k].primary;
          peer.status = buf[k].status;
          buf[k].message[sizeof buf[k].message - 1] = '\0';
          peer.message = buf[k].message;
        }
        if (info[k].instance_state == DDS_IST_ALIVE) {
          if (info[k].valid_data) alive_[soc] = true;
          peer.alive = alive_[soc];
        } else if (alive_[soc]) {
          alive_[soc] = false;
          peer.alive = false;
          peer.lost = true;
          if (!lost_) lost_ = soc;
        }
      }
      if (n < 8) return;
    }
  }

  // Whether a sample of run `run` belongs to this link's run (none does before a follower adopts).
  bool ourRun(std::uint64_t run) const {
    const std::uint64_t mine = run_.load(std::memory_order_acquire);
    return mine != 0 && run == mine;
  }
  // A follower that knows no run yet adopts the run of the primary's ready state `s`.
  void adoptRun(const tactus_dds_MasterState& s) {
    if (run_.load(std::memory_order_acquire) != 0 || o_.soc == o_.primary) return;
    if (s.soc != o_.primary || s.state != kPeerReady || s.run == 0) return;
    run_.store(s.run, std::memory_order_release);
  }

  LinkOptions o_;
  // The run's identity: drawn by the primary's link, adopted by a follower's (pollStates); read on
  // Cyclone's receiving threads too.
  std::atomic<std::uint64_t> run_;
  bool domainHeld_ = false;  // counted in gDomains
  dds_entity_t participant_ = 0, endWriter_ = 0, endReader_ = 0, stateWriter_ = 0, stateReader_ = 0, waitset_ = 0;
  dds_entity_t releaseWriter_ = 0, releaseReader_ = 0, probeWriter_ = 0, probeReader_ = 0;
  Delivery<RemoteEnd> ends_;          // deliverEnds: on the end reader
  Delivery<RemoteRelease> releases_;  // deliverReleases: on the release reader
  Delivery<ClockAnswer> clock_;       // deliverClock: on the probe reader
  std::vector<bool> alive_;
  std::vector<PeerState> peers_;  // by SoC; state 0: never heard of
  std::optional<std::uint32_t> lost_;
};

}  // namespace

bool available() { return true; }

std::string missingText() { return {}; }

Result<std::unique_ptr<Link>> Link::open(const LinkOptions& options) {
  auto link = std::make_unique<DdsLink>(options);
  if (auto ok = link->init(); !ok) return ok.error();
  return std::unique_ptr<Link>(std::move(link));
}

}  // namespace tactus::soc_link
