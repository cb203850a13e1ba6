// The problem model of one hyperepoch: its runnables, their unrolled instances (nodes), levels
// for the priority rules, and the outcome of one schedule of it (Attempt) with its Score.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <tuple>
#include <vector>

#include "graph.hpp"
#include "tactus/core/result.hpp"

namespace tactus::compiler::schedule {

/// One unrolled instance while a hyperepoch is scheduled.
struct Node {
  RunnableId runnable{};    // the graph's runnable
  std::uint32_t local = 0;  // index into the hyperepoch's runnable list
  std::uint32_t frame = 0;
  std::int64_t releaseNs = 0;   // frame release + StartTime
  std::int64_t frameNs = 0;     // frame release
  std::int64_t boundaryNs = 0;  // next frame's release
};

/// The resources of one placement, as resource indices. Held in place up to kInline, on the
/// heap beyond: nearly every instance holds one to three resources, and a vector's allocation
/// per instance and attempt was the largest part of the scheduler's heap and allocations.
class ResourceList {
 public:
  static constexpr std::uint32_t kInline = 3;

  ResourceList() = default;
  ResourceList(std::initializer_list<std::uint32_t> rs) { assign(rs.begin(), rs.end()); }
  ResourceList(const std::vector<std::uint32_t>& rs) { assign(rs.begin(), rs.end()); }  // NOLINT: implicit
  ResourceList(const ResourceList& o) { assign(o.begin(), o.end()); }
  ResourceList(ResourceList&& o) noexcept { take(o); }
  ResourceList& operator=(const ResourceList& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  ResourceList& operator=(ResourceList&& o) noexcept {
    if (this != &o) take(o);
    return *this;
  }

  template <typename It>
  void assign(It first, It last) {
    size_ = static_cast<std::uint32_t>(std::distance(first, last));
    if (size_ > kInline) {
      heap_ = std::make_unique<std::uint32_t[]>(size_);
    } else {
      heap_.reset();
    }
    std::copy(first, last, data());
  }

  const std::uint32_t* data() const { return heap_ ? heap_.get() : inline_; }
  std::uint32_t* data() { return heap_ ? heap_.get() : inline_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::uint32_t* begin() const { return data(); }
  const std::uint32_t* end() const { return data() + size_; }
  bool operator==(const ResourceList& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }

 private:
  void take(ResourceList& o) {
    size_ = o.size_;
    heap_ = std::move(o.heap_);
    std::copy(o.inline_, o.inline_ + kInline, inline_);
    o.size_ = 0;
  }

  std::uint32_t size_ = 0;
  std::uint32_t inline_[kInline] = {};
  std::unique_ptr<std::uint32_t[]> heap_;
};

/// Where one instance was placed.
struct Placement {
  std::int64_t startNs = 0;
  std::int64_t endNs = 0;
  std::uint64_t seq = 0;   // placement order, a topological order of the instances
  ResourceList resources;  // resource indices (index of a ResourceId)
};

/// The outcome of one priority rule on one hyperepoch.
struct Attempt {
  std::vector<Placement> placements;
  std::int64_t lengthNs = 0;
  std::uint64_t boundaryMisses = 0;
  std::uint64_t deadlineMisses = 0;
  bool abandoned = false;  // stopped before every instance was placed (Rule::cutoff, or stuck)
  // No order of the streams' submissions found: every submitter left would queue its work
  // behind work that waits for it. `stuckAt` is one such submitter's node.
  bool stuck = false;
  std::uint32_t stuckAt = 0;
};

/// The per-hyperepoch problem, shared by the priority rules.
struct Problem {
  const Graph* graph = nullptr;
  const IdVector<RunnableId, std::int64_t>* wcet = nullptr;  // effective WCET per graph runnable
  const IdVector<RunnableId, const std::vector<ResourceRequest>*>* requests = nullptr;
  std::vector<RunnableId> runnables;                   // local -> the graph's runnable
  std::vector<std::vector<std::uint32_t>> localDeps;   // local -> local predecessors
  std::vector<std::vector<std::uint32_t>> localSuccs;  // local -> local successors
  std::vector<std::uint32_t> localSubmitter;           // local -> local submitter or kNone
  std::vector<Node> nodes;
  std::vector<std::uint32_t> nodeBase;  // local runnable -> node of its frame 0 (+ frame * stride)
  std::vector<std::uint32_t> nodeStride;
  std::vector<std::int64_t> latestStart;    // local: ALAP start from the frame release
  std::vector<std::int64_t> topLevel;       // local: longest path to its start from the release
  std::vector<std::int64_t> succCount;      // local: number of immediate successors
  std::vector<std::int64_t> localDeadline;  // local: Deadline from the frame release, or kNoDuration
  std::vector<std::uint32_t> localSoc;      // local: its client's SoC (multi-SoC graphs), else kNone
  std::uint32_t socCount = 0;               // the graph's SoCs (0 for one machine)
  std::vector<std::int64_t> socLagNs;       // [from * socCount + to]: added to a dependency between two SoCs
  bool hasCrossSocLag = false;              // some dependency crosses SoCs with a lag > 0

  /// The time after dependency `dep`'s end at which `local` may start (both local indices).
  std::int64_t lagNs(std::uint32_t dep, std::uint32_t local) const {
    const std::uint32_t from = localSoc[dep], to = localSoc[local];
    return from != to ? socLagNs[from * socCount + to] : 0;  // both kNone on one machine
  }

  std::uint32_t nodeOf(std::uint32_t local, std::uint32_t frame) const {
    return nodeBase[local] + frame * nodeStride[local];
  }
};

/// The lexicographic objective: boundary misses, longer than the period, deadline misses, length.
struct Score {
  std::uint64_t boundaryMisses = 0;
  int over = 0;
  std::uint64_t deadlineMisses = 0;
  std::int64_t lengthNs = 0;
  auto tie() const { return std::make_tuple(boundaryMisses, over, deadlineMisses, lengthNs); }
  /// Every frame in its boundary and period and every deadline met: only the length is left to improve.
  bool clean() const { return boundaryMisses == 0 && over == 0 && deadlineMisses == 0; }
  bool operator<(const Score& o) const { return tie() < o.tie(); }
  bool operator>=(const Score& o) const { return !(*this < o); }
};

/// The score of one schedule of a hyperepoch of period `periodNs`.
Score scoreOf(const Attempt& a, std::int64_t periodNs);

/// What every hyperepoch's problem shares: effective WCETs and requests per global runnable (a
/// round-robin group takes its longest member's WCET, and its first member's requests when it
/// has none), and the scheduled runnables per epoch (round-robin members run in their group's slot).
struct GraphModel {
  const Graph* graph = nullptr;
  IdVector<RunnableId, std::int64_t> wcet;
  IdVector<RunnableId, const std::vector<ResourceRequest>*> requests;
  IdVector<EpochId, std::vector<RunnableId>> epochRunnables;
};

/// Checks indices and durations of `g` so that scheduling never reads out of range (kBadParameter).
Result<void> checkGraph(const Graph& g);

/// The model shared by the hyperepochs of a checked graph (it must outlive their problems).
GraphModel modelGraph(const Graph& g);

/// The problem of hyperepoch `h`: local runnables and their instances (epoch by epoch,
/// frame-major), local dependencies (on round-robin groups, with the submitter), deadlines and
/// levels (computeLevels). `localOf` is scratch of one entry per runnable, all kNone, and is
/// left so. Fails on a dependency into another epoch or a cycle (kValidation).
Result<Problem> buildProblem(const GraphModel& model, HyperepochId h, IdVector<RunnableId, std::uint32_t>& localOf);

/// Topological order (Kahn), then ALAP latest starts, top levels and successor counts of a
/// hyperepoch's local runnables. Fails on a dependency cycle.
Result<void> computeLevels(Problem& pb, const HyperepochInfo& he);

/// The resources a hyperepoch's requests may take and those it owns, ascending, as indices for
/// the search's per-resource arrays (requests naming resources outside the hyperepoch's list are
/// the verifier's to report).
std::vector<std::uint32_t> touchedResources(const Problem& pb, const HyperepochInfo& he);

}  // namespace tactus::compiler::schedule
