// The link between the masters of a multi-SoC schedule (one master per SoC): runnable ends that a
// runnable on another SoC waits for, and each master's liveliness, over Eclipse Cyclone DDS
// (reliable, keyed topics; discovery and interfaces from Cyclone's own configuration,
// CYCLONEDDS_URI). No DDS type appears here: dds/dds.h stays in soc_link/src.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"

namespace tactus::soc_link {

/// The link's protocol version: 2 puts the run's identity (a nonce the primary draws, the followers
/// adopt from its ready state) in every sample, on topics `tactus_v2_*`; masters of version 1
/// (topics without the version) do not meet masters of version 2 at all.
inline constexpr std::uint32_t kLinkVersion = 2;

/// Whether this build has the DDS link (-Dmultisoc with Cyclone DDS and its idlc found).
bool available();

/// What a build without the link lacks and how to get it (for the refusal of a multi-SoC run).
std::string missingText();

/// Where a link joins: one schedule's masters in one DDS domain.
struct LinkOptions {
  std::uint32_t domain = 0;                   ///< DDS domain id (`--dds-domain`)
  std::uint16_t schedule = 0;                 ///< schedule identifier: keys every sample
  std::uint32_t soc = 0;                      ///< this master's SoC (index into the schedule's SoCs)
  std::uint32_t primary = 0;                  ///< the primary SoC this master follows or is (announced)
  std::int64_t livelinessNs = 5'000'000'000;  ///< a peer silent this long is lost (`-o`, STM's 5 s): its
                                              ///< writers' liveliness and its DDS participant's lease
};

/// A runnable end published by another SoC's master.
struct RemoteEnd {
  std::uint64_t iteration = 0;  ///< hyperepoch iteration
  std::uint32_t frame = 0;      ///< frame of the runnable's epoch
  std::uint32_t runnable = 0;   ///< RunnableId index in the schedule
  std::int64_t endNs = 0;       ///< the sender's CLOCK_MONOTONIC at the end
};

/// A frame release of the primary master, as another SoC's master received it.
struct RemoteRelease {
  std::uint32_t hyperepoch = 0;  ///< HyperepochId index in the schedule
  std::uint64_t iteration = 0;   ///< the hyperepoch iteration that starts (or, with stopAfter, does not)
  std::int64_t releaseNs = 0;    ///< the primary's CLOCK_MONOTONIC at the iteration's start; with
                                 ///< stopAfter (no start to carry): why the primary stopped (shm::StopReason)
  std::int64_t sentNs = 0;       ///< the primary's CLOCK_MONOTONIC when it sent the sample
  std::int64_t receivedNs = 0;   ///< this host's CLOCK_MONOTONIC when the sample was taken
  std::uint64_t stopAfter = 0;   ///< 0: run on; else every master stops before iteration stopAfter - 1
};

/// One answered clock question (askClock): the four times of a two-way exchange. The primary's
/// clock minus this host's is ((heardNs - askedNs) + (answeredNs - receivedNs)) / 2, within half
/// the round trip (receivedNs - askedNs) - (answeredNs - heardNs) whatever the link's asymmetry.
struct ClockAnswer {
  std::uint64_t seq = 0;        ///< the question's number
  std::int64_t askedNs = 0;     ///< this host's CLOCK_MONOTONIC when it asked
  std::int64_t heardNs = 0;     ///< the primary's when the question arrived
  std::int64_t answeredNs = 0;  ///< the primary's when it answered
  std::int64_t receivedNs = 0;  ///< this host's when the answer was taken
};

/// What another SoC's master last announced, and whether it is still there.
struct PeerState {
  std::uint32_t soc = 0;      ///< its SoC (index into the schedule's SoCs)
  std::uint32_t state = 0;    ///< as announced: 1 ready, 2 running, 3 stopping
  std::uint32_t primary = 0;  ///< as announced: the SoC it takes for the primary
  std::int32_t status = 0;    ///< with state 3: 0 the run ended well, else it failed
  std::string message;        ///< with state 3: the end of its run in words
  bool alive = false;         ///< announced, and its liveliness lease not lost
  bool lost = false;          ///< it was alive and then lost its liveliness (or closed its link)
};

/// One master's end of the link. Not copyable; closing it leaves the DDS domain.
class Link {
 public:
  /// Joins the domain: a participant with a writer and a reader of runnable ends and of master
  /// states (the latter with automatic liveliness leased for `livelinessNs`).
  static Result<std::unique_ptr<Link>> open(const LinkOptions& options);
  virtual ~Link() = default;
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  /// Publishes the end of runnable `runnable` in `frame` of `iteration` (reliable; keyed by
  /// schedule, runnable and frame, the last 64 iterations of each kept until taken).
  virtual Result<void> publishEnd(std::uint64_t iteration, std::uint32_t frame, std::uint32_t runnable,
                                  std::int64_t endNs) = 0;
  /// Waits up to `timeoutNs` for runnable ends of other SoCs; returns those that arrived (may be
  /// none).
  virtual Result<std::vector<RemoteEnd>> takeEnds(std::int64_t timeoutNs) = 0;
  /// Hands every runnable end of another SoC to `handler` as it arrives, on Cyclone's receiving
  /// thread (no thread of ours to wake: the hand-off's path is one wake-up shorter than takeEnds'
  /// waitset). The handler must be short and must not call the link. An empty handler stops the
  /// delivery, waiting for a call in progress to return; so does closing the link.
  virtual Result<void> deliverEnds(std::function<void(const RemoteEnd&)> handler) = 0;
  /// Announces this master (state: 1 ready, 2 running, 3 stopping) to the others; with state 3,
  /// `status` (0: the run ended well) and `message` (cut to 200 bytes) say how the run ended.
  virtual Result<void> announce(std::uint32_t state, std::int32_t status = 0, const std::string& message = "") = 0;
  /// Waits at most `timeoutNs` until every other master seen alive and still running (not lost, no
  /// stopping state of its own) has a reader matched with this link's state writer and has
  /// acknowledged the last announce: a master's last word (its stopping state, then closing the
  /// link) reaches a peer that discovered this link only just before. False when the time ran out
  /// first (a frozen peer, or one that died within -o, never acknowledges).
  virtual bool awaitStateAcks(std::int64_t timeoutNs) = 0;
  /// Every other master seen so far, by SoC (ascending).
  virtual std::vector<PeerState> peers() = 0;
  /// Publishes the primary's start of `iteration` of `hyperepoch` at `releaseNs` (this host's
  /// CLOCK_MONOTONIC), or, with `stopAfter` > 0, that every master stops before iteration
  /// stopAfter - 1 (reliable; keyed by schedule and hyperepoch, the last 64 kept until taken).
  virtual Result<void> publishRelease(std::uint32_t hyperepoch, std::uint64_t iteration, std::int64_t releaseNs,
                                      std::uint64_t stopAfter) = 0;
  /// Hands every release of the primary to `handler` as it arrives, on Cyclone's receiving thread
  /// (as deliverEnds: no thread of ours to wake on a follower's release path). The same rules:
  /// short, no calls into the link; an empty handler or closing the link stops the delivery.
  virtual Result<void> deliverReleases(std::function<void(const RemoteRelease&)> handler) = 0;
  /// A follower: asks the primary's master for its clock (answered by the primary's link on
  /// Cyclone's receiving thread, once its clock delivery runs); `seq` numbers the question.
  virtual Result<void> askClock(std::uint64_t seq) = 0;
  /// Starts the clock exchange: on the primary, its link answers every follower's question from
  /// now on (`handler` is not called); on a follower, each answer to its own questions is handed
  /// to `handler` on Cyclone's receiving thread (the rules of deliverEnds). Empty: stops it.
  virtual Result<void> deliverClock(std::function<void(const ClockAnswer&)> handler) = 0;
  /// How many readers of other masters this link's release writer is matched with, and how many
  /// writers its release reader is matched with (a release written before a match is lost).
  virtual std::uint32_t releaseWriterMatches() = 0;
  /// See releaseWriterMatches.
  virtual std::uint32_t releaseReaderMatches() = 0;
  /// The SoCs whose masters have been seen alive (announced and their lease not lost).
  virtual std::vector<std::uint32_t> aliveSocs() = 0;
  /// How many other masters' links the runnable-end topic is matched with both ways (ends
  /// written before a peer is matched do not reach it: the start waits for this).
  virtual std::uint32_t matchedPeers() = 0;
  /// The first SoC whose master was seen and then lost its liveliness, if any.
  virtual std::optional<std::uint32_t> lostSoc() = 0;
  /// The run's identity this link's samples carry and the only one it takes: the primary's link
  /// draws it at open, a follower's adopts it from the primary's ready state (0 until then).
  virtual std::uint64_t runId() = 0;

 protected:
  Link() = default;
};

}  // namespace tactus::soc_link
