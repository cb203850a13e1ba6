// Building a Graph: resolving requests, submissions, dependencies and round-robin groups.
#include "graph/builder.hpp"

#include <algorithm>
#include <utility>

#include "graph/graph_rules.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/suggest.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler::parse {
namespace {

bool sameRequests(const GraphRunnable& a, const GraphRunnable& b) {
  if (a.resources.size() != b.resources.size()) return false;
  for (std::size_t i = 0; i < a.resources.size(); ++i)
    if (a.resources[i].kind != b.resources[i].kind || a.resources[i].candidates != b.resources[i].candidates)
      return false;
  return true;
}

}  // namespace

/// Resolves `Client.Name` (split at the first dot) to a runnable.
RunnableId Builder::resolveRef(const Ref& ref, const std::string& context) const {
  std::size_t dot = ref.text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == ref.text.size())
    die(ErrorCode::kValidation, ref.line,
        context + ": " + quoted(ref.text) + " is not a runnable reference (write Client.Runnable)");
  auto c = clientByName_.find(ref.text.substr(0, dot));
  if (c == clientByName_.end()) {
    std::vector<std::string_view> clients;
    for (const ClientInfo& ci : g_.clients) clients.push_back(ci.name);
    die(ErrorCode::kValidation, ref.line,
        context + ": unknown client " + quoted(ref.text.substr(0, dot)) + " in " + quoted(ref.text) +
            didYouMean(ref.text.substr(0, dot), clients, "declared clients:"));
  }
  const auto& byName = runnableByName_[c->second];
  auto r = byName.find(ref.text.substr(dot + 1));
  if (r == byName.end())
    die(ErrorCode::kValidation, ref.line, context + ": unknown runnable " + quoted(ref.text) + runnableHint(ref.text));
  return r->second;
}

std::string Builder::runnableHint(std::string_view ref) const {
  const std::size_t dot = ref.find('.');
  const std::string_view clientName = ref.substr(0, dot), name = ref.substr(dot + 1);
  const ClientId client = clientByName_.at(clientName);
  // The client's runnables in the order written (round-robin groups are not runnables to name).
  std::vector<std::string_view> names;
  for (RunnableId r : g_.runnables.ids())
    if (g_.runnables[r].client == client && g_.runnables[r].kind != RunnableKind::kAliasGroup)
      names.push_back(g_.runnables[r].name);
  const std::string_view guess = closestName(name, names);
  std::string hint = " (";
  if (!guess.empty()) {
    hint += "did you mean " + quoted(std::string(clientName) + "." + std::string(guess)) + "? ";
  } else {
    // The runnable under another client (the client part is the mistake).
    for (ClientId other : g_.clients.ids())
      if (other != client && runnableByName_[other].count(name) != 0) {
        hint += "did you mean " + quoted(g_.clients[other].name + "." + std::string(name)) + "? ";
        break;
      }
  }
  if (names.empty()) return hint + "client " + quoted(clientName) + " declares no runnables)";
  return hint + "client " + quoted(clientName) + " declares " + nameList(names) + ")";
}

void Builder::useLocal(ResourceId res, HyperepochId h, RunnableId r, u32 atLine) {
  ResourceInfo& info = g_.resources[res];
  if (info.hyperepoch == kNone) {
    info.hyperepoch = h;
  } else if (info.hyperepoch != h) {
    die(ErrorCode::kValidation, atLine,
        "runnable " + quoted(runnableName(g_, r)) + " uses client resource " + quoted(info.name) + " from hyperepoch " +
            quoted(g_.hyperepochs[h].name) + ", but it is already used in hyperepoch " +
            quoted(g_.hyperepochs[info.hyperepoch].name));
  }
}

std::string_view Builder::stripClientSoc(std::string_view text, ClientId client, u32 atLine,
                                         const std::string& who) const {
  const std::size_t first = text.find('.');
  if (first == std::string_view::npos) return {};
  const std::size_t second = text.find('.', first + 1);
  if (second == std::string_view::npos || second + 1 == text.size()) return {};
  std::string_view clientName = text.substr(0, first);
  std::string_view socName = text.substr(first + 1, second - first - 1);
  auto c = clientByName_.find(clientName);
  if (c == clientByName_.end()) return {};
  if (c->second != client)
    die(ErrorCode::kValidation, atLine,
        who + " uses resource " + quoted(text) + " of client " + quoted(clientName) + ", which only that client sees");
  auto s = socByName_.find(socName);
  if (s == socByName_.end())
    die(ErrorCode::kValidation, atLine, who + " uses resource " + quoted(text) + " of unknown SoC " + quoted(socName));
  if (s->second != g_.clients[client].soc)
    die(ErrorCode::kValidation, atLine,
        who + " uses resource " + quoted(text) + " of SoC " + quoted(socName) + ", but its client " +
            quoted(clientName) + " runs on SoC " + quoted(g_.socs[g_.clients[client].soc].name));
  return text.substr(second + 1);
}

std::string Builder::resourceHint(std::string_view wrong, ClientId client, HyperepochId h) const {
  const u32 soc = g_.clients[client].soc;
  std::vector<std::string_view> global, local, types, all;
  auto addType = [&](std::string_view type) {
    if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
  };
  for (const ResourceInfo& info : g_.resources) {
    if (info.client == kNone && info.hyperepoch == h && info.soc == soc) {
      global.push_back(info.name);
      addType(info.type);
    } else if (info.client == client && (info.hyperepoch == kNone || info.hyperepoch == h)) {
      local.push_back(info.name);
      addType(info.type);
    }
  }
  all = global;
  all.insert(all.end(), local.begin(), local.end());
  all.insert(all.end(), types.begin(), types.end());
  std::vector<std::string> parts;
  const std::string_view guess = closestName(wrong, all);
  if (!guess.empty()) parts.push_back("did you mean " + quoted(guess) + "?");
  if (!global.empty()) parts.push_back("hyperepoch " + quoted(g_.hyperepochs[h].name) + " has " + nameList(global));
  if (!local.empty()) parts.push_back("client " + quoted(g_.clients[client].name) + " has " + nameList(local));
  if (!types.empty()) parts.push_back("types: " + nameList(types));
  if (parts.empty()) return {};
  std::string hint = " (" + parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) hint += (i == 1 && !guess.empty() ? " " : "; ") + parts[i];
  return hint + ")";
}

void Builder::resolveRequests(RunnableId r) {
  GraphRunnable& gr = g_.runnables[r];
  const HyperepochId h = g_.epochs[gr.epoch].hyperepoch;
  const std::string who = "runnable " + quoted(runnableName(g_, r));
  const u32 soc = g_.clients[gr.client].soc;
  auto& locals = localByName_[gr.client];
  auto localTypes = localTypes_.find(gr.client);
  std::vector<ResourceRequest> hardware, software;
  std::vector<std::pair<ResourceId, u32>> taken;  // resource, line of the request
  for (const Ref& ref : raw_[r].resources) {
    ResourceRequest req;
    req.text = std::string(ref.text);
    const ResourceKind builtIn = kindOfType(ref.text);  // kMutex: not a built-in type
    bool globalType = globalTypes_.count(ref.text) != 0 || isHardware(builtIn);
    bool localType = localTypes != localTypes_.end() && localTypes->second.count(ref.text) != 0;
    if (globalType || localType || isEngineQueue(builtIn)) {
      req.isType = true;
      req.kind = kindOfType(ref.text);
      // globals of the type in this hyperepoch, then the client's own of the type
      auto byType = byType_.find(ref.text);
      const std::vector<ResourceId> none;
      for (ResourceId i : byType == byType_.end() ? none : byType->second) {
        const ResourceInfo& info = g_.resources[i];
        // A multi-SoC graph's runnable takes a resource of its client's SoC only.
        if (info.client == kNone && info.hyperepoch == h && info.soc == soc) req.candidates.push_back(i);
        if (info.client == gr.client) {
          useLocal(i, h, r, ref.line);
          req.candidates.push_back(i);
        }
      }
      if (req.candidates.empty())
        die(ErrorCode::kValidation, ref.line,
            who + " requests type " + quoted(ref.text) + ", but no resource of that type is in hyperepoch " +
                quoted(g_.hyperepochs[h].name) +
                (soc == kNone ? std::string() : " on its client's SoC " + quoted(g_.socs[soc].name)) +
                " or local to its client");
    } else {
      ResourceId res = findGlobal(ref.text, soc);
      if (res != kNone && g_.resources[res].soc != soc) {
        die(ErrorCode::kValidation, ref.line,
            who + " uses resource " + quoted(ref.text) + " of SoC " + quoted(g_.socs[g_.resources[res].soc].name) +
                ", but its client " + quoted(g_.clients[gr.client].name) + " runs on SoC " + quoted(g_.socs[soc].name) +
                " (a runnable's resources are on its client's SoC)");
      }
      if (res != kNone) {
        HyperepochId rh = g_.resources[res].hyperepoch;
        if (rh != h)
          die(ErrorCode::kValidation, ref.line,
              who + " of hyperepoch " + quoted(g_.hyperepochs[h].name) + " uses resource " + quoted(ref.text) +
                  (rh == kNone ? std::string(", which belongs to no hyperepoch")
                               : ", which belongs to hyperepoch " + quoted(g_.hyperepochs[rh].name)));
      } else {
        std::string_view text = ref.text;
        if (soc != kNone) {
          std::string_view stripped = stripClientSoc(text, gr.client, ref.line, who);
          if (!stripped.empty()) text = stripped;
        }
        auto l = locals.find(text);
        if (l == locals.end()) {
          std::size_t dot = ref.text.find('.');
          if (soc != kNone && dot != std::string_view::npos && socByName_.count(ref.text.substr(0, dot)) == 0 &&
              clientByName_.count(ref.text.substr(0, dot)) == 0)
            die(ErrorCode::kValidation, ref.line,
                who + " uses resource " + quoted(ref.text) + " of unknown SoC " + quoted(ref.text.substr(0, dot)));
          for (ClientId other : g_.clients.ids())
            if (localByName_[other].count(ref.text) != 0)
              die(ErrorCode::kValidation, ref.line,
                  who + " uses resource " + quoted(ref.text) + " of client " + quoted(g_.clients[other].name) +
                      ", which only that client sees");
          die(ErrorCode::kValidation, ref.line,
              who + " uses unknown resource " + quoted(ref.text) + resourceHint(ref.text, gr.client, h));
        }
        res = l->second;
        useLocal(res, h, r, ref.line);
      }
      req.kind = g_.resources[res].kind;
      req.candidates.push_back(res);
    }
    for (ResourceId cand : req.candidates) taken.push_back({cand, ref.line});
    if (isHardware(req.kind)) hardware.push_back(std::move(req));
    else software.push_back(std::move(req));
  }
  std::sort(taken.begin(), taken.end());
  for (std::size_t i = 1; i < taken.size(); ++i)
    if (taken[i].first == taken[i - 1].first)
      die(ErrorCode::kValidation, taken[i].second,
          who + " requests resource " + quoted(g_.resources[taken[i].first].name) + " twice");
  if (hardware.size() != 1) {
    // None, with a resource of a type one typo from a hardware type (`CPUS:`): that type was taken
    // for a scheduling mutex (any other type is one), so the typo is the likely cause.
    std::string hint;
    static constexpr std::string_view kHardwareTypes[] = {"CPU", "GPU", "DLA", "VPU"};
    for (const ResourceRequest& q : software) {
      if (q.candidates.empty()) continue;
      const ResourceInfo& held = g_.resources[q.candidates.front()];
      const std::string_view guess = closestName(held.type, kHardwareTypes);
      if (guess.empty()) continue;
      hint = " (" + quoted(held.name) + " is of type " + quoted(held.type) +
             ", a scheduling mutex: did you mean type " + quoted(guess) + "?)";
      break;
    }
    die(ErrorCode::kValidation, gr.loc.line,
        who + " must hold exactly one hardware resource (a CPU, GPU, DLA or VPU), not " +
            std::to_string(hardware.size()) + hint);
  }
  gr.resources.clear();
  gr.resources.push_back(std::move(hardware.front()));
  for (ResourceRequest& s : software) gr.resources.push_back(std::move(s));
  gr.kind = isEngine(gr.resources.front().kind) ? RunnableKind::kSubmittee : RunnableKind::kCpu;
}

void Builder::resolveRunnables() {
  // Type requests look resources up by type: index them once, in resource order.
  for (ResourceId i : g_.resources.ids()) byType_[g_.resources[i].type].push_back(i);
  for (RunnableId r : g_.runnables.ids()) resolveRequests(r);
  // submitters and submittees
  for (RunnableId r : g_.runnables.ids()) {
    if (!raw_[r].hasSubmits) continue;
    GraphRunnable& gr = g_.runnables[r];
    const std::string who = "runnable " + quoted(runnableName(g_, r));
    RunnableId s = resolveRef(raw_[r].submits, who + " Submits");
    GraphRunnable& se = g_.runnables[s];
    u32 at = raw_[r].submits.line;
    const ResourceKind engine = se.resources.front().kind;  // of the submittee: GPU, DLA or VPU
    if (gr.resources.front().kind != ResourceKind::kCpu)
      die(ErrorCode::kValidation, at,
          who + " submits " + (isEngine(engine) ? typeKeyOf(engine) : "GPU") + " work and must run on a CPU");
    if (!isEngine(engine))
      die(ErrorCode::kValidation, at,
          who + " submits " + quoted(runnableName(g_, s)) + ", which does not run on a GPU, DLA or VPU");
    if (s == r) die(ErrorCode::kValidation, at, who + " submits itself");
    if (se.client != gr.client)
      die(ErrorCode::kValidation, at, who + " submits " + quoted(runnableName(g_, s)) + " of another client");
    if (se.epoch != gr.epoch)
      die(ErrorCode::kValidation, at, who + " submits " + quoted(runnableName(g_, s)) + " of another epoch");
    if (se.submittedBy != kNone)
      die(ErrorCode::kValidation, at,
          quoted(runnableName(g_, s)) + " is submitted by both " + quoted(runnableName(g_, se.submittedBy)) + " and " +
              quoted(runnableName(g_, r)));
    // The submitter holds one queue of its submittee's engine kind: a CUDA stream for GPU work,
    // a DLA handle for DLA work, a PVA stream for VPU work.
    const ResourceKind queueKind = queueOfEngine(engine);
    const char* engineType = typeKeyOf(engine);
    const char* queueType = typeKeyOf(queueKind);
    ResourceRequest* stream = nullptr;
    ResourceRequest* other = nullptr;  // a queue of another kind
    for (ResourceRequest& req : gr.resources) {
      if (!isEngineQueue(req.kind)) continue;
      if (req.kind != queueKind) {
        other = &req;
        continue;
      }
      if (stream != nullptr) die(ErrorCode::kValidation, at, who + " holds more than one " + queueWord(queueKind));
      stream = &req;
    }
    if (other != nullptr)
      die(ErrorCode::kValidation, at,
          who + " submits " + quoted(runnableName(g_, s)) + ", which runs on a " + engineType + ", but holds " +
              quoted(other->text) + " (a " + typeKeyOf(other->kind) + ", which feeds a " +
              typeKeyOf(engineOfQueue(other->kind)) + "); a submitter of " + engineType + " work holds a " + queueType +
              " of its client");
    if (stream == nullptr)
      die(ErrorCode::kValidation, at, who + " submits " + engineType + " work but holds no " + queueType + " resource");
    // The submittee runs on a device that one of the submitter's streams maps to.
    std::vector<ResourceId>& gpus = se.resources.front().candidates;
    std::vector<ResourceId> narrowed;
    for (ResourceId gpu : gpus)
      for (ResourceId st : stream->candidates)
        if (g_.resources[st].device == gpu) {
          narrowed.push_back(gpu);
          break;
        }
    if (narrowed.empty())
      die(ErrorCode::kValidation, at,
          who + " submits " + quoted(runnableName(g_, s)) + ", but none of its " + queueWord(queueKind) +
              "s maps to a " + engineType + " that " + quoted(runnableName(g_, s)) + " may run on");
    std::vector<ResourceId> streams;
    for (ResourceId st : stream->candidates)
      if (std::find(narrowed.begin(), narrowed.end(), g_.resources[st].device) != narrowed.end()) streams.push_back(st);
    gpus = std::move(narrowed);
    stream->candidates = std::move(streams);
    gr.kind = RunnableKind::kSubmitter;
    gr.submits = s;
    se.submittedBy = r;
  }
  for (RunnableId r : g_.runnables.ids()) {
    const GraphRunnable& gr = g_.runnables[r];
    if (gr.kind == RunnableKind::kSubmittee && gr.submittedBy == kNone)
      die(ErrorCode::kValidation, gr.loc.line,
          std::string(typeKeyOf(gr.resources.front().kind)) + " runnable " + quoted(runnableName(g_, r)) +
              " is submitted by no runnable (a CPU runnable must name it in Submits)");
  }
  // dependencies
  for (RunnableId r : g_.runnables.ids()) {
    GraphRunnable& gr = g_.runnables[r];
    const std::string who = "runnable " + quoted(runnableName(g_, r));
    for (const Ref& ref : raw_[r].dependencies) {
      RunnableId d = resolveRef(ref, who);
      if (d == r) die(ErrorCode::kValidation, ref.line, who + " depends on itself");
      if (g_.runnables[d].epoch != gr.epoch)
        die(ErrorCode::kValidation, ref.line,
            who + " of epoch " + quoted(epochName(gr.epoch)) + " depends on " + quoted(runnableName(g_, d)) +
                " of epoch " + quoted(epochName(g_.runnables[d].epoch)) + " (dependencies must stay within one epoch)");
      gr.dependencies.push_back(d);
    }
    if (gr.submittedBy != kNone) gr.dependencies.push_back(gr.submittedBy);
    sortUnique(gr.dependencies);
  }
}

std::string Builder::epochName(EpochId e) const {
  return g_.hyperepochs[g_.epochs[e].hyperepoch].name + "." + g_.epochs[e].name;
}

void Builder::collectGroups(u32 list, EpochId e, ClientId c) {
  expect(list, NodeKind::kSeq, "AliasGroups");
  for (std::size_t i = 0; i < t_.size(list); ++i) {
    auto [key, value] = singleEntry(t_.kid(list, i), "an alias group");
    rawGroups_.push_back(RawGroup{key, value, e, c});
  }
}

void Builder::buildGroups() {
  std::unordered_set<std::string_view> names;
  for (const RawGroup& raw : rawGroups_) {
    std::string_view name = t_.text(raw.nameNode);
    u32 at = line(raw.nameNode);
    checkName(name, raw.nameNode, "alias group", true);
    if (!names.insert(name).second) die(ErrorCode::kValidation, at, "duplicate alias group " + quoted(name));
    std::string where = "alias group " + quoted(name);
    u32 steps = kNone;
    forEachKey(raw.valueNode, where, kAliasGroupTable, [&](std::string_view k, u32 kn, u32 v) {
      if (k == "Steps") steps = v;
      else notRead(k, kn, where);
    });
    if (steps == kNone) die(ErrorCode::kValidation, at, where + " has no Steps");
    expect(steps, NodeKind::kSeq, "the Steps of " + where);
    GraphRunnable group;
    group.name = std::string(name);
    group.kind = RunnableKind::kAliasGroup;
    group.epoch = raw.epoch;
    group.client = raw.client;
    group.loc = SourceLoc{origin_, static_cast<int>(at)};
    group.priority = 10;
    RunnableId first = kNone;
    const RunnableId gi{static_cast<u32>(g_.runnables.size())};
    for (std::size_t i = 0; i < t_.size(steps); ++i) {
      u32 item = t_.kid(steps, i);
      if (kind(item) == NodeKind::kNull || (kind(item) == NodeKind::kScalar && t_.text(item) == "None")) {
        group.steps.push_back(kNone);
        continue;
      }
      Ref ref{scalar(item, "a step of " + where), line(item)};
      RunnableId m = resolveRef(ref, where);
      GraphRunnable& mr = g_.runnables[m];
      if (mr.epoch != raw.epoch)
        die(ErrorCode::kValidation, ref.line,
            where + " of epoch " + quoted(epochName(raw.epoch)) + " names " + quoted(runnableName(g_, m)) +
                " of epoch " + quoted(epochName(mr.epoch)));
      if (group.client == kNone) group.client = mr.client;
      if (mr.client != group.client)
        die(ErrorCode::kValidation, ref.line,
            where + " mixes clients: " + quoted(runnableName(g_, m)) + " is not of client " +
                quoted(g_.clients[group.client].name));
      if (mr.aliasGroup != kNone && mr.aliasGroup != gi)
        die(ErrorCode::kValidation, ref.line,
            quoted(runnableName(g_, m)) + " is in alias groups " + quoted(g_.runnables[mr.aliasGroup].name) + " and " +
                quoted(name));
      if (mr.kind != RunnableKind::kCpu)
        die(ErrorCode::kValidation, ref.line,
            where + ": " + quoted(runnableName(g_, m)) +
                " is a submitter or submittee; round robin of GPU work is not supported");
      if (first == kNone) {
        first = m;
        group.wcetNs = mr.wcetNs;
        group.resources = mr.resources;
        group.priority = mr.priority;
        group.startTimeNs = mr.startTimeNs;
      } else if (!sameRequests(g_.runnables[first], mr)) {
        die(ErrorCode::kValidation, ref.line,
            where + ": " + quoted(runnableName(g_, m)) + " and " + quoted(runnableName(g_, first)) +
                " use different resources");
      }
      if (group.client != kNone) {
        auto& byName = runnableByName_[group.client];
        auto clash = byName.find(name);
        if (clash != byName.end() && g_.runnables[clash->second].kind != RunnableKind::kAliasGroup)
          die(ErrorCode::kValidation, at,
              where + " has the name of runnable " + quoted(runnableName(g_, clash->second)));
      }
      group.wcetNs = std::max(group.wcetNs, mr.wcetNs);
      group.priority = std::min(group.priority, mr.priority);
      group.startTimeNs = std::max(group.startTimeNs, mr.startTimeNs);
      if (mr.deadlineNs != kNoDuration && (group.deadlineNs == kNoDuration || mr.deadlineNs < group.deadlineNs))
        group.deadlineNs = mr.deadlineNs;
      if (mr.endMonitorThresholdNs != kNoDuration)
        group.endMonitorThresholdNs = std::max(group.endMonitorThresholdNs, mr.endMonitorThresholdNs);
      mr.aliasGroup = gi;
      group.steps.push_back(m);
    }
    if (first == kNone) die(ErrorCode::kValidation, at, where + " has no runnable among its steps");
    if (g_.runnables.size() >= limits::kMaxRunnables)
      die(ErrorCode::kValidation, at, "more than " + std::to_string(limits::kMaxRunnables) + " runnables in the graph");
    g_.runnables.push_back(std::move(group));
  }
}

}  // namespace tactus::compiler::parse
