// The priority list scheduler (insertion into idle gaps, or Graham's time-driven list scheduling).
#include "schedule/list_scheduler.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <utility>

namespace tactus::compiler::schedule {
namespace {

// Ready-list entry: smaller compares first.
struct ReadyKey {
  std::int64_t key1;
  std::int64_t key2;
  std::uint32_t priority;
  std::uint32_t frame;
  RunnableId runnable;
  std::uint32_t node;
  bool operator>(const ReadyKey& o) const {
    return std::tie(key1, key2, priority, frame, runnable, node) >
           std::tie(o.key1, o.key2, o.priority, o.frame, o.runnable, o.node);
  }
  bool operator<(const ReadyKey& o) const { return o > *this; }
};

// Runs the list scheduler with one rule over one hyperepoch's instances.
class ListScheduler {
 public:
  ListScheduler(const Problem& pb, Rule rule, std::vector<FreeTime>& free)
      : pb_(pb), g_(*pb.graph), rule_(rule), free_(free) {
    at_.placements.resize(pb.nodes.size());
    waiting_.resize(pb.nodes.size());
    // What the placement of every instance reads of its runnable and resources, gathered once:
    // a graph runnable is a large record, read in scattered order otherwise.
    stream_.resize(free.size());
    for (std::uint32_t c = 0; c < free.size(); ++c) stream_[c] = isEngineQueue(g_.resources[c].kind) ? 1 : 0;
    local_.resize(pb.runnables.size());
    std::map<std::vector<std::uint32_t>, std::uint32_t> interned;  // candidate list -> its place in plainCands_
    std::vector<std::uint32_t> key;
    for (std::uint32_t l = 0; l < pb.runnables.size(); ++l) {
      const RunnableId r = pb.runnables[l];
      const GraphRunnable& gr = g_.runnables[r];
      Local& lo = local_[l];
      lo.wcet = (*pb.wcet)[r];
      lo.requests = (*pb.requests)[r];
      lo.priority = gr.priority;
      lo.kind = gr.kind;
      lo.pinned = pinnedStream(r);
      lo.plain = gr.kind != RunnableKind::kSubmitter && gr.kind != RunnableKind::kSubmittee &&
                 lo.requests->size() == 1 && !(*lo.requests)[0].candidates.empty() &&
                 (*lo.requests)[0].candidates.size() <= UINT16_MAX &&
                 std::none_of((*lo.requests)[0].candidates.begin(), (*lo.requests)[0].candidates.end(),
                              [&](ResourceId c) { return stream_[index(c)] != 0; });
      if (lo.plain) {
        // Interned: the few distinct candidate lists (every `CPU` request has the same) stay in
        // cache, where each request's own list was a cache miss per instance.
        const auto& cands = (*lo.requests)[0].candidates;
        key.clear();
        for (ResourceId c : cands) key.push_back(index(c));
        const auto [it, added] = interned.emplace(key, static_cast<std::uint32_t>(plainCands_.size()));
        if (added) plainCands_.insert(plainCands_.end(), key.begin(), key.end());
        lo.candFirst = it->second;
        lo.candCount = static_cast<std::uint16_t>(cands.size());
      }
    }
    streamLast_.assign(free.size(), 0);
    workLast_.assign(free.size(), 0);
    pinned_.assign(free.size(), 0);
    for (const Node& nd : pb.nodes)
      if (const std::uint32_t bound = local_[nd.local].pinned; bound != kNone) ++pinned_[bound];
    outstanding_.assign(free.size(), 0);
    queueTail_.assign(free.size(), kNone);
    if (rule_.cutoff != nullptr) cutoff_ = scoreOf(*rule_.cutoff, rule_.periodNs);
    submitteeOf_.assign(pb.runnables.size(), kNone);
    for (std::uint32_t l = 0; l < pb.localSubmitter.size(); ++l)
      if (pb.localSubmitter[l] != kNone) submitteeOf_[pb.localSubmitter[l]] = l;
    if (!pb.localSubmitter.empty() &&
        std::any_of(pb.localSubmitter.begin(), pb.localSubmitter.end(), [](std::uint32_t l) { return l != kNone; })) {
      queuedAfter_.assign(pb.nodes.size(), kNone);
      queuedBefore_.assign(pb.nodes.size(), kNone);
      placed_.assign(pb.nodes.size(), 0);
      seen_.assign(pb.nodes.size(), 0);
    }
    if (rule_.timed) {
      busyUntil_.assign(free.size(), 0);
      // Marked per resource: a list of every runnable's candidates kept its size to the end.
      std::vector<char> isHardware(free.size(), 0);
      for (RunnableId r : pb.runnables) {
        const auto& reqs = *(*pb.requests)[r];
        if (reqs.empty()) continue;
        for (ResourceId c : reqs[0].candidates) isHardware[index(c)] = 1;
      }
      for (std::uint32_t c = 0; c < isHardware.size(); ++c)
        if (isHardware[c] != 0) hardware_.push_back(c);
      groupByCandidates();
    }
  }

  Attempt run() {
    for (std::uint32_t n = 0; n < pb_.nodes.size(); ++n) {
      waiting_[n] = static_cast<std::uint32_t>(pb_.localDeps[pb_.nodes[n].local].size());
      if (waiting_[n] == 0) becomeReady(n);
    }
    if (rule_.timed) {
      runTimed();
    } else {
      while (!at_.abandoned) {
        bool forced = false;
        std::uint32_t n = kNone;
        if (ready_.empty()) {
          if (deferred_.empty()) break;
          // Only submitters waiting for a stream with work queued are left: every order needs a
          // second submission queued behind work not yet run (`sub0`'s work waits for `sub1`,
          // `sub1`'s for what follows `sub0`). Queue the most urgent one that can be: behind work
          // that does not wait for its own (queuedWaitsFor). The others go on waiting.
          forced = true;
          n = mostUrgentDeferred();
          if (n == kNone) return stuck(deferred_.front());
        } else {
          n = ready_.top().node;
          ready_.pop();
          if (streamBlocked(n, false)) {
            deferred_.push_back(n);
            continue;
          }
        }
        force_ = forced;
        Choice c = choose(n, earliest(n));
        place(n, c);
        force_ = false;
      }
    }
    return std::move(at_);
  }

 private:
  struct Choice {
    std::int64_t start = 0;
    ResourceList resources;  // hardware first, then software, then the stream
  };

  ReadyKey keyOf(std::uint32_t n) const {
    const Node& nd = pb_.nodes[n];
    ReadyKey k{};
    const std::int64_t ls = nd.frameNs + pb_.latestStart[nd.local];
    if (rule_.keyOverride != nullptr) {
      k.key1 = (*rule_.keyOverride)[n];
      k.key2 = ls;
    } else switch (rule_.key) {
        case 1:
          k.key1 = ls - pb_.topLevel[nd.local];
          k.key2 = ls;
          break;
        case 2:
          k.key1 = ls;
          k.key2 = -pb_.succCount[nd.local];
          break;
        case 3: {
          const std::uint32_t work = submitteeOf_[nd.local];
          k.key1 = work != kNone ? nd.frameNs + pb_.topLevel[work] : ls;
          k.key2 = ls;
          break;
        }
        default:
          k.key1 = ls;
          k.key2 = 0;
          break;
      }
    k.priority = local_[nd.local].priority;
    k.frame = nd.frame;
    k.runnable = nd.runnable;
    k.node = n;
    return k;
  }

  void becomeReady(std::uint32_t n) {
    if (rule_.timed) {
      pending_.emplace(earliest(n), n);
    } else {
      ready_.push(keyOf(n));
    }
  }

  // The one stream submitter `r` is bound to, or kNone (not a submitter, or a choice of streams).
  std::uint32_t pinnedStream(RunnableId r) const {
    if (g_.runnables[r].kind != RunnableKind::kSubmitter) return kNone;
    for (const auto& q : *(*pb_.requests)[r])
      if (isEngineQueue(q.kind) && q.candidates.size() == 1) return index(q.candidates[0]);
    return kNone;
  }

  // An engine queue: a CUDA stream, DLA handle or PVA stream (all with a stream's semantics).
  bool isStream(std::uint32_t r) const { return stream_[r] != 0; }

  // A CUDA stream serialises the submissions (its submitters hold it while they run) and runs
  // its work in submission order. The list scheduler keeps that order: submitters are appended
  // to a stream's timeline only, and a work waits for the work queued before it on its stream
  // (an extra predecessor, queuedBefore_) and is appended after it (on the device, whose
  // timeline it may otherwise fill anywhere). It prefers one outstanding submission per stream
  // (a submitter placed, its work not yet): a submitter whose every stream has work outstanding
  // waits (deferred) until that work is placed. Where only such submitters are left (`force`),
  // one is queued behind the outstanding work, on a stream whose queued work does not wait for
  // the submitter's own work: that work would wait for work queued behind it.
  bool streamBlocked(std::uint32_t n, bool force) {
    const Local& lo = local_[pb_.nodes[n].local];
    if (lo.kind != RunnableKind::kSubmitter) return false;
    for (const auto& q : *lo.requests) {
      if (!isEngineQueue(q.kind)) continue;
      return std::none_of(q.candidates.begin(), q.candidates.end(),
                          [&](ResourceId c) { return streamOpen(n, index(c), force); });
    }
    return false;
  }

  // Whether submitter `n` may submit into stream `c` now (see streamBlocked).
  bool streamOpen(std::uint32_t n, std::uint32_t c, bool force) {
    return outstanding_[c] == 0 || (force && !queuedWaitsFor(n, c));
  }

  // Whether work queued on stream `c` and not yet placed waits, through dependencies and the
  // queues' order, for the work of submitter `n`: queued behind it, that work would never run.
  // A search backwards from the stream's last queued work over instances not yet placed.
  bool queuedWaitsFor(std::uint32_t n, std::uint32_t c) {
    const Node& nd = pb_.nodes[n];
    const std::uint32_t workLocal = submitteeOf_[nd.local];
    const std::uint32_t tail = queueTail_[c];
    if (workLocal == kNone || tail == kNone || placed_[tail] != 0) return false;
    const std::uint32_t work = pb_.nodeOf(workLocal, nd.frame);
    ++stamp_;
    stack_.assign(1, tail);
    seen_[tail] = stamp_;
    while (!stack_.empty()) {
      const std::uint32_t x = stack_.back();
      stack_.pop_back();
      if (x == work) return true;
      const Node& xn = pb_.nodes[x];
      auto visit = [&](std::uint32_t y) {
        if (y == kNone || placed_[y] != 0 || seen_[y] == stamp_) return;
        seen_[y] = stamp_;
        stack_.push_back(y);
      };
      for (std::uint32_t d : pb_.localDeps[xn.local]) visit(pb_.nodeOf(d, xn.frame));
      visit(queuedBefore_[x]);
    }
    return false;
  }

  // The most urgent deferred submitter whose stream can take its work behind the outstanding
  // work (streamBlocked with force), taken off the deferred list; kNone when there is none.
  std::uint32_t mostUrgentDeferred() {
    std::size_t best = deferred_.size();
    for (std::size_t k = 0; k < deferred_.size(); ++k) {
      if (best != deferred_.size() && !(keyOf(deferred_[k]) < keyOf(deferred_[best]))) continue;
      if (!streamBlocked(deferred_[k], true)) best = k;
    }
    if (best == deferred_.size()) return kNone;
    const std::uint32_t n = deferred_[best];
    deferred_.erase(deferred_.begin() + static_cast<std::ptrdiff_t>(best));
    return n;
  }

  // No submitter left can queue its work without it waiting for work queued behind it: this
  // rule found no order of the streams' submissions. Its schedule is abandoned as stuck.
  Attempt stuck(std::uint32_t n) {
    at_.abandoned = true;
    at_.stuck = true;
    at_.stuckAt = n;
    return std::move(at_);
  }

  // Release + StartTime, and the end of every dependency (all placed by now), plus the transfer
  // time of a dependency across SoCs.
  std::int64_t earliest(std::uint32_t n) const {
    const Node& nd = pb_.nodes[n];
    std::int64_t t = nd.releaseNs;
    for (std::uint32_t d : pb_.localDeps[nd.local]) {
      t = std::max(t, at_.placements[pb_.nodeOf(d, nd.frame)].endNs + pb_.lagNs(d, nd.local));
    }
    if (!queuedBefore_.empty() && queuedBefore_[n] != kNone) t = std::max(t, at_.placements[queuedBefore_[n]].endNs);
    return t;
  }

  // Resource choice: requests with one candidate are fixed first, then each open request takes
  // the candidate giving the earliest common start. A submittee runs on its submitter's stream's
  // device, after the earlier work of that stream, and does not hold the stream.
  Choice choose(std::uint32_t n, std::int64_t t) {
    const Node& nd = pb_.nodes[n];
    const Local& gr = local_[nd.local];
    const std::int64_t w = gr.wcet;
    const auto& reqs = *gr.requests;
    if (gr.plain) return choosePlain(plainCands_.data() + gr.candFirst, gr.candCount, t, w);
    chosen_.assign(reqs.size(), kNone);
    fixed_.clear();
    std::uint32_t stream = kNone;
    if (gr.kind == RunnableKind::kSubmittee && pb_.localSubmitter[nd.local] != kNone) {
      const Placement& sp = at_.placements[pb_.nodeOf(pb_.localSubmitter[nd.local], nd.frame)];
      for (std::uint32_t r : sp.resources) {
        if (isStream(r)) {
          stream = r;
          break;
        }
      }
      if (stream != kNone) t = std::max(t, workLast_[stream]);
    }
    const bool submitter = gr.kind == RunnableKind::kSubmitter;
    auto allowed = [&](std::size_t q, std::uint32_t c) {
      if (std::find(fixed_.begin(), fixed_.end(), c) != fixed_.end()) return false;
      if (stream != kNone && isStream(c)) return false;  // a submittee holds no stream
      if (submitter && isStream(c) && !streamOpen(n, c, force_)) return false;
      // A submittee runs on the device its submitter's stream maps to.
      if (stream != kNone && q == 0 && isEngine(g_.resources[c].kind)) {
        return index(g_.resources[stream].device) == c;
      }
      return true;
    };
    for (std::size_t q = 0; q < reqs.size(); ++q) {
      std::uint32_t only = kNone;
      std::size_t count = 0;
      for (ResourceId id : reqs[q].candidates) {
        const std::uint32_t c = index(id);
        if (allowed(q, c)) {
          ++count;
          only = c;
        }
      }
      if (count == 1) {
        chosen_[q] = only;
        fixed_.push_back(only);
      }
    }
    for (std::uint32_t r : fixed_)
      if (isStream(r)) t = std::max(t, streamLast_[r]);  // streams are appended to only
    std::int64_t s = commonFit(free_, fixed_, t, w);
    for (std::size_t q = 0; q < reqs.size(); ++q) {
      if (chosen_[q] != kNone) continue;
      std::int64_t best = kInfinity;
      std::int64_t bestGap = -1;
      std::uint32_t bestC = kNone;
      // A submitter free to choose its stream avoids one that a submitter not yet placed is
      // bound to: work queued there first could wait for that submitter's work, queued behind it.
      bool unpinned = false;
      for (ResourceId id : reqs[q].candidates)
        unpinned = unpinned || (allowed(q, index(id)) && (!isStream(index(id)) || pinned_[index(id)] == 0));
      for (ResourceId id : reqs[q].candidates) {
        const std::uint32_t c = index(id);
        if (!allowed(q, c)) continue;
        if (unpinned && isStream(c) && pinned_[c] != 0) continue;
        fixed_.push_back(c);
        std::int64_t gapStart = 0;  // c's gap at sc
        const std::int64_t sc = commonFit(free_, fixed_, isStream(c) ? std::max(s, streamLast_[c]) : s, w, &gapStart);
        fixed_.pop_back();
        // Earliest start; on a tie the tightest fit (the gap that opened last), then the index.
        if (sc < best || (sc == best && gapStart > bestGap)) {
          best = sc;
          bestGap = gapStart;
          bestC = c;
        }
      }
      if (bestC == kNone) continue;  // no candidate left; the verifier reports the instance
      chosen_[q] = bestC;
      fixed_.push_back(bestC);
      s = best;
    }
    Choice c;
    for (std::uint32_t r : fixed_)
      if (isStream(r)) s = std::max(s, streamLast_[r]);
    c.start = commonFit(free_, fixed_, s, w);
    // Collected in scratch: the placement's list is sized once.
    picked_.clear();
    for (std::uint32_t r : chosen_) {
      if (r != kNone) picked_.push_back(r);
    }
    c.resources.assign(picked_.begin(), picked_.end());
    return c;
  }

  // choose() for a runnable with one request among resources that are no engine queue, and no
  // submitter or submittee: every candidate is allowed, none fixed before, so the choice is the
  // candidate whose own free time fits earliest (on a tie the gap that opened last, then the
  // first), at that start. What choose()'s general steps give, without them.
  Choice choosePlain(const std::uint32_t* candidates, std::size_t count, std::int64_t t, std::int64_t w) const {
    Choice c;
    if (count == 1) {
      const std::uint32_t only = candidates[0];
      c.start = free_[only].fit(t, w);
      c.resources.assign(&only, &only + 1);
      return c;
    }
    std::int64_t best = kInfinity;
    std::int64_t bestGap = -1;
    std::uint32_t bestC = kNone;
    for (std::size_t k = 0; k < count; ++k) {
      const std::uint32_t r = candidates[k];
      std::int64_t gapStart = 0;
      const std::int64_t sc = free_[r].fit(t, w, &gapStart);
      if (sc < best || (sc == best && gapStart > bestGap)) {
        best = sc;
        bestGap = gapStart;
        bestC = r;
      }
    }
    c.start = best;
    c.resources.assign(&bestC, &bestC + 1);
    return c;
  }

  void place(std::uint32_t n, Choice& c) {
    const Node& nd = pb_.nodes[n];
    const Local& lo = local_[nd.local];
    const std::int64_t w = lo.wcet;
    Placement& pl = at_.placements[n];
    pl.startNs = c.start;
    pl.endNs = c.start + w;
    pl.seq = seq_++;
    pl.resources = std::move(c.resources);
    for (std::uint32_t r : pl.resources) free_[r].reserve(pl.startNs, w);
    const RunnableKind kind = lo.kind;
    if (lo.pinned != kNone) --pinned_[lo.pinned];
    for (std::uint32_t r : pl.resources) {
      if (!isStream(r) || kind != RunnableKind::kSubmitter) continue;
      streamLast_[r] = std::max(streamLast_[r], pl.endNs);
      ++outstanding_[r];
      if (submitteeOf_[nd.local] != kNone) enqueue(pb_.nodeOf(submitteeOf_[nd.local], nd.frame), r);
    }
    if (!placed_.empty()) placed_[n] = 1;
    if (kind == RunnableKind::kSubmittee && pb_.localSubmitter[nd.local] != kNone) {
      for (std::uint32_t r : at_.placements[pb_.nodeOf(pb_.localSubmitter[nd.local], nd.frame)].resources) {
        if (!isStream(r)) continue;
        workLast_[r] = std::max(workLast_[r], pl.endNs);
        if (outstanding_[r] != 0 && --outstanding_[r] == 0 && !rule_.timed) {
          for (std::uint32_t d : deferred_) ready_.push(keyOf(d));
          deferred_.clear();
        }
      }
    }
    at_.lengthNs = std::max(at_.lengthNs, pl.endNs);
    if (pl.endNs > nd.boundaryNs) ++at_.boundaryMisses;
    const std::int64_t dl = pb_.localDeadline[nd.local];
    if (dl != kNoDuration && pl.endNs > nd.frameNs + dl) ++at_.deadlineMisses;
    if (rule_.cutoff != nullptr && scoreOf(at_, rule_.periodNs) >= cutoff_) at_.abandoned = true;
    if (rule_.timed) {
      ends_.push(pl.endNs);
      for (std::uint32_t r : pl.resources) busyUntil_[r] = std::max(busyUntil_[r], pl.endNs);
    }
    for (std::uint32_t sl : pb_.localSuccs[nd.local]) {
      const std::uint32_t m = pb_.nodeOf(sl, nd.frame);
      if (--waiting_[m] == 0) becomeReady(m);
    }
    if (!queuedAfter_.empty() && queuedAfter_[n] != kNone && --waiting_[queuedAfter_[n]] == 0)
      becomeReady(queuedAfter_[n]);
  }

  // Queues `work` on stream `r`: behind the stream's last work while that is not placed (one
  // more predecessor to wait for; placed before `work`'s submitter releases its successors).
  void enqueue(std::uint32_t work, std::uint32_t r) {
    const std::uint32_t tail = queueTail_[r];
    if (tail != kNone && placed_[tail] == 0) {
      queuedAfter_[tail] = work;
      queuedBefore_[work] = tail;
      ++waiting_[work];
    }
    queueTail_[r] = work;
  }

  // Time-driven: the local runnables grouped by the candidates of their requests, so that a
  // whole group whose requests cannot all be met now is passed over at once (see runTimed).
  void groupByCandidates() {
    std::map<std::vector<std::vector<std::uint32_t>>, std::uint32_t> ids;
    groupOf_.reserve(pb_.runnables.size());
    for (RunnableId r : pb_.runnables) {
      std::vector<std::vector<std::uint32_t>> lists;
      for (const auto& q : *(*pb_.requests)[r]) {
        lists.emplace_back();
        for (ResourceId c : q.candidates) lists.back().push_back(index(c));
      }
      const auto [it, added] = ids.emplace(std::move(lists), static_cast<std::uint32_t>(ids.size()));
      if (added) groupCandidates_.push_back(it->first);
      groupOf_.push_back(it->second);
    }
    available_.resize(groupCandidates_.size());
    next_.resize(groupCandidates_.size());
    blocked_.resize(groupCandidates_.size());
  }

  // Time-driven: every request of group `grp` has a candidate free at `now`.
  bool groupFreeNow(std::uint32_t grp, std::int64_t now) const {
    auto freeNow = [&](std::uint32_t r) { return busyUntil_[r] <= now; };
    return std::all_of(groupCandidates_[grp].begin(), groupCandidates_[grp].end(),
                       [&](const auto& list) { return std::any_of(list.begin(), list.end(), freeNow); });
  }

  // Time-driven: the group whose next instance of this pass is the most urgent, or kNone.
  std::uint32_t mostUrgentGroup() const {
    std::uint32_t best = kNone;
    for (std::uint32_t grp = 0; grp < available_.size(); ++grp) {
      if (blocked_[grp] || next_[grp] == available_[grp].end()) continue;
      if (best == kNone || *next_[grp] < *next_[best]) best = grp;
    }
    return best;
  }

  // Time-driven: at each event time, start the available instances in priority order where
  // their resources are free now; then move to the next end or release.
  void runTimed() {
    std::int64_t now = 0;
    std::size_t placed = 0;
    while (placed < pb_.nodes.size() && !at_.abandoned) {
      while (!pending_.empty() && pending_.top().first <= now) {
        const std::uint32_t n = pending_.top().second;
        available_[groupOf_[pb_.nodes[n].local]].insert(keyOf(n));
        pending_.pop();
      }
      const bool progress = startAvailable(now, placed);
      if (progress) continue;
      std::int64_t next = kInfinity;
      while (!ends_.empty() && ends_.top() <= now) ends_.pop();
      if (!ends_.empty()) next = ends_.top();
      if (!pending_.empty()) next = std::min(next, pending_.top().first);
      if (next == kInfinity) {
        // Nothing runs and nothing is pending: only submitters waiting for a stream with work
        // queued are left (or, as a guard against hangs, what cannot start at `now`). Queue one.
        if (!forceAvailable(now, placed)) {
          if (placed < pb_.nodes.size() && !at_.stuck) at_.abandoned = at_.stuck = true;
          break;
        }
        continue;
      }
      now = next;
    }
  }

  // Time-driven, one pass at `now`: the available instances in priority order (merged over the
  // groups), each started where it can start now; true when one was. Nothing is placed after
  // `now`, so a resource is free now exactly when its last instance has ended, and a resource
  // busy now stays so for the pass: a group found blocked is skipped for the rest of the pass,
  // where a scan of every instance made each event cost the whole ready list. The order and
  // the placements are those of one scan over all instances.
  bool startAvailable(std::int64_t now, std::size_t& placed) {
    bool progress = false;
    auto freeNow = [&](std::uint32_t r) { return busyUntil_[r] <= now; };
    for (std::uint32_t grp = 0; grp < available_.size(); ++grp) {
      next_[grp] = available_[grp].begin();
      blocked_[grp] = false;
    }
    for (;;) {
      // The scan ends once every hardware resource is busy.
      if (std::none_of(hardware_.begin(), hardware_.end(), freeNow)) break;
      const std::uint32_t grp = mostUrgentGroup();
      if (grp == kNone) break;
      if (!groupFreeNow(grp, now)) {
        blocked_[grp] = true;
        continue;
      }
      auto& it = next_[grp];
      const std::uint32_t n = it->node;
      if (streamBlocked(n, false)) {
        ++it;
        continue;
      }
      Choice c = choose(n, now);
      if (c.start != now) {
        ++it;
        continue;
      }
      it = available_[grp].erase(it);
      place(n, c);
      ++placed;
      progress = true;
      if (at_.abandoned) break;
      // Zero-length instances may make successors available at this very time.
      if (!pending_.empty() && pending_.top().first <= now) break;
    }
    return progress;
  }

  // Time-driven, where nothing runs and nothing is pending: places the most urgent available
  // instance at its earliest, a submitter queued behind outstanding work where its stream's
  // order allows (streamBlocked with force). False when none can be placed: stuck.
  bool forceAvailable(std::int64_t now, std::size_t& placed) {
    const ReadyKey* first = nullptr;
    std::uint32_t grp = kNone;
    for (std::uint32_t k = 0; k < available_.size(); ++k)
      for (const ReadyKey& key : available_[k]) {
        if (first != nullptr && !(key < *first)) break;
        if (streamBlocked(key.node, true)) continue;
        first = &key;
        grp = k;
        break;
      }
    if (first == nullptr) {
      for (const auto& set : available_)
        if (!set.empty()) at_.stuckAt = set.begin()->node;
      return false;
    }
    const ReadyKey key = *first;
    const std::uint32_t n = key.node;
    available_[grp].erase(key);
    force_ = true;
    Choice c = choose(n, now);
    place(n, c);
    force_ = false;
    ++placed;
    return true;
  }

  // Per local runnable: what placing its instances reads.
  struct Local {
    std::int64_t wcet = 0;
    const std::vector<ResourceRequest>* requests = nullptr;
    std::uint32_t priority = 0;
    std::uint32_t pinned = kNone;  // the one stream a submitter is bound to (pinnedStream)
    std::uint32_t candFirst = 0;   // plain: its candidates, plainCands_[candFirst, + candCount)
    std::uint16_t candCount = 0;
    RunnableKind kind = RunnableKind::kCpu;
    bool plain = false;  // one request with candidates, no engine queue among them, no submission (choosePlain)
  };

  const Problem& pb_;
  const Graph& g_;
  std::vector<Local> local_;
  std::vector<std::uint8_t> stream_;       // per resource: an engine queue
  std::vector<std::uint32_t> plainCands_;  // the distinct candidate lists of plain runnables
  Rule rule_;
  std::vector<FreeTime>& free_;
  Attempt at_;
  std::vector<std::uint32_t> waiting_;
  std::priority_queue<ReadyKey, std::vector<ReadyKey>, std::greater<ReadyKey>> ready_;
  using Pending = std::pair<std::int64_t, std::uint32_t>;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> pending_;
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<std::int64_t>> ends_;
  std::vector<std::uint32_t> chosen_;
  std::vector<std::uint32_t> fixed_;
  std::vector<std::uint32_t> picked_;    // choose(): the chosen resources, in request order
  std::vector<std::int64_t> busyUntil_;  // time-driven: end of the last instance per resource
  std::vector<std::uint32_t> hardware_;  // time-driven: every hardware candidate
  std::vector<std::uint32_t> groupOf_;   // time-driven: local runnable -> its group (same candidates)
  std::vector<std::vector<std::vector<std::uint32_t>>> groupCandidates_;  // per group: per request
  std::vector<std::set<ReadyKey, std::less<>>> available_;                // per group, most urgent first
  std::vector<std::set<ReadyKey, std::less<>>::iterator> next_;           // per group: this pass's next
  std::vector<char> blocked_;                // per group: a request has no candidate free in this pass
  std::vector<std::int64_t> streamLast_;     // per stream: end of its last submitter
  std::vector<std::int64_t> workLast_;       // per stream: end of its last work (submittee)
  std::vector<std::uint32_t> pinned_;        // per stream: submitters bound to it not yet placed
  std::vector<std::uint32_t> outstanding_;   // per stream: submitters placed whose work is not yet
  std::vector<std::uint32_t> deferred_;      // submitters waiting for a stream without outstanding work
  std::vector<std::uint32_t> queueTail_;     // per stream: the work submitted last (node), or kNone
  std::vector<std::uint32_t> queuedAfter_;   // per work node: the work queued right behind it while it waited
  std::vector<std::uint32_t> queuedBefore_;  // per work node: the work it was queued behind, not yet placed then
  std::vector<std::uint8_t> placed_;         // per node (graphs with submitters)
  std::vector<std::uint32_t> seen_;          // queuedWaitsFor: per node, the stamp of its last visit
  std::vector<std::uint32_t> stack_;         // queuedWaitsFor: scratch
  std::uint32_t stamp_ = 0;
  std::vector<std::uint32_t> submitteeOf_;  // local submitter -> its local submittee, or kNone
  Score cutoff_;                            // the score of rule_.cutoff, when set
  bool force_ = false;                      // while placing one deferred submitter: behind outstanding work
  std::uint64_t seq_ = 0;
};

}  // namespace

Attempt listSchedule(const Problem& pb, const Rule& rule, std::vector<FreeTime>& free) {
  return ListScheduler(pb, rule, free).run();
}

}  // namespace tactus::compiler::schedule
