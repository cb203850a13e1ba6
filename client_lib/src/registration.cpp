// The client's registration rules: which runnables a client must register, and registering
// runnables, CUDA submitters and streams in its schedules by their names in the graph.
#include "registration.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include "tactus/core/suggest.hpp"
#include "tactus/core/text.hpp"
#include "tactus/ipc/notes.hpp"

namespace tactus::client {

// Whether the runnable is one a client must register (CPU functions and submitters).
bool needsRegistration(const RunnableInfo& r) {
  return r.kind == RunnableKind::kCpu || r.kind == RunnableKind::kSubmitter;
}

namespace {

// Where a registration looked, for kNotFound messages: the schedule, or all of them.
std::string whereLooked(const Runtime& rt) {
  if (rt.scheduleCount <= 1) return "in schedule '" + rt.schedule.name + "'";
  return "in any of the instance's " + std::to_string(rt.scheduleCount) + " schedules";
}

// Registers in every schedule of the client (the union over a master's several schedules): `one`
// registers in one schedule and says whether that schedule has the name. kNotFound, with
// `notFound` and where it looked, when none has it.
// `name` and `names` (the client's names of that kind, over its schedules) make the "did you mean";
// the master hears of a name no schedule has (a warning note, ipc/notes.hpp), since the
// application may end without entering the scheduler (or go on without that name, and take part).
template <typename One>
Result<void> registerInEach(ClientSession& session, const std::string& notFound, const std::string& name,
                            const std::vector<std::string>& names, One&& one) {
  bool found = false;
  for (Runtime* schedule : session.all()) {
    if (!schedule->member()) continue;
    auto here = one(*schedule);
    if (!here) return here.error();
    found = found || *here;
  }
  if (found) return {};
  const Runtime& rt = session.primary();
  const std::vector<std::string_view> views(names.begin(), names.end());
  const std::string message = notFound + " of client '" + rt.name + "' " + whereLooked(rt) +
                              didYouMean(name, views, "client '" + rt.name + "' has:");
  (void)ipc::sendNote(noteBoxOf(rt), rt.name,
                      std::string(ipc::kNoteWarning) + "it registered a name its schedule does not have: " + message);
  return fail(ErrorCode::kNotFound, message);
}

// What a name that is not found could have meant: the client's names of that kind.
enum class NameKind { kRunnables, kSubmitters, kStreams, kQueues };

// The names of rt's client's things of `kind` over its schedules: runnables it registers (CPU
// runnables and submitters), CUDA submitters, CUDA streams, or DLA/PVA engine queues.
std::vector<std::string> namesOfClient(const ClientSession& session, NameKind kind) {
  std::vector<std::string> names;
  for (const Runtime* s : session.all()) {
    if (!s->member()) continue;
    for (const ResourceInfo& r : s->schedule.resources) {
      if (r.client != s->clientIndex) continue;
      if ((kind == NameKind::kStreams && r.kind == ResourceKind::kCudaStream) ||
          (kind == NameKind::kQueues && isDlaOrPvaQueue(r.kind)))
        names.push_back(r.name);
    }
    if (kind != NameKind::kRunnables && kind != NameKind::kSubmitters) continue;
    for (const RunnableInfo& r : s->schedule.runnables) {
      if (r.client != s->clientIndex || !needsRegistration(r)) continue;
      if (kind == NameKind::kRunnables || r.kind == RunnableKind::kSubmitter) names.push_back(r.name);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// The runnable `name` of rt's client in its schedule (kNone: not there).
RunnableId runnableNamed(const Runtime& rt, const std::string& name) {
  for (RunnableId r : rt.schedule.runnables.ids()) {
    const RunnableInfo& info = rt.schedule.runnables[r];
    if (info.client == rt.clientIndex && info.name == name) return r;
  }
  return kNone;
}

// kAlreadyExists when runnable r of this schedule is registered already (as either kind).
Result<void> refuseTwice(const Runtime& rt, RunnableId r, const std::string& name) {
  if (!rt.registrations[r].registered && !rt.cudaSubmitters[r].registered) return {};
  return fail(ErrorCode::kAlreadyExists, "runnable '" + rt.name + "." + name + "' is already registered");
}

// Registers stream `name` in one schedule: false when it has no such stream of the client.
Result<bool> registerStreamInSchedule(Runtime& rt, const std::string& name, CUstream_st* stream,
                                      const std::string& what) {
  ResourceId found = kNone;
  for (ResourceId r : rt.schedule.resources.ids()) {
    const ResourceInfo& info = rt.schedule.resources[r];
    if (info.kind == ResourceKind::kCudaStream && info.client == rt.clientIndex && info.name == name) found = r;
  }
  if (found == kNone) return false;
  if (rt.streams[found] != nullptr) return fail(ErrorCode::kAlreadyExists, what + ": the name is registered already");
  for (ResourceId r : rt.streams.ids()) {
    if (rt.streams[r] == stream) {
      return fail(ErrorCode::kAlreadyExists,
                  what + ": this stream is registered already as '" + rt.schedule.resources[r].name + "'");
    }
  }
  const ResourceId device = rt.schedule.resources[found].device;
  std::uint32_t onDevice = 1;
  for (ResourceId r : rt.streams.ids()) {
    if (rt.streams[r] != nullptr && rt.schedule.resources[r].device == device) ++onDevice;
  }
  std::uint32_t limit = deviceStreamLimit();
  std::string why = "the device's " + std::to_string(limit) + " hardware queues (CUDA_DEVICE_MAX_CONNECTIONS)";
  if (rt.schedule.resources.contains(device) && rt.schedule.resources[device].streamLimit < limit) {
    limit = rt.schedule.resources[device].streamLimit;
    why = "its stream limit of " + std::to_string(limit) + " in the graph";
  }
  if (onDevice > limit) {
    const std::string dev = rt.schedule.resources.contains(device) ? rt.schedule.resources[device].name : "?";
    return fail(ErrorCode::kValidation,
                what + ": " + std::to_string(onDevice) + " streams on '" + dev + "' exceed " + why);
  }
  rt.streams[found] = stream;
  return true;
}

// Registers engine queue `name` (a DLA_HANDLE or PVA_STREAM of the client) in one schedule: false
// when it has no such queue.
Result<bool> registerQueueInSchedule(Runtime& rt, const std::string& name, const EngineQueueRegistration& queue,
                                     const std::string& what) {
  ResourceId found = kNone;
  for (ResourceId r : rt.schedule.resources.ids()) {
    const ResourceInfo& info = rt.schedule.resources[r];
    if (isDlaOrPvaQueue(info.kind) && info.client == rt.clientIndex && info.name == name) found = r;
  }
  if (found == kNone) return false;
  if (rt.engineQueues[found].queue != nullptr)
    return fail(ErrorCode::kAlreadyExists, what + ": the name is registered already");
  for (ResourceId r : rt.engineQueues.ids()) {
    if (rt.engineQueues[r].queue == queue.queue) {
      return fail(ErrorCode::kAlreadyExists,
                  what + ": this queue is registered already as '" + rt.schedule.resources[r].name + "'");
    }
  }
  rt.engineQueues[found] = queue;
  return true;
}

}  // namespace

Result<void> registerRunnableIn(ClientSession& session, const std::string& name, const Registration& registration) {
  return registerInEach(session, "runnable '" + name + "' is not a CPU runnable", name,
                        namesOfClient(session, NameKind::kRunnables), [&](Runtime& s) -> Result<bool> {
                          const RunnableId r = runnableNamed(s, name);
                          if (r == kNone || !needsRegistration(s.schedule.runnables[r])) return false;
                          if (auto ok = refuseTwice(s, r, name); !ok) return ok.error();
                          s.registrations[r] = registration;
                          s.registrations[r].registered = true;
                          return true;
                        });
}

Result<void> registerCudaSubmitterIn(ClientSession& session, const std::string& name,
                                     CudaSubmitterRegistration registration) {
  std::string notSubmitter;  // a schedule where the name is a runnable without Submits
  registration.registered = true;
  auto ok = registerInEach(session, "runnable '" + name + "' is not a submitter", name,
                           namesOfClient(session, NameKind::kSubmitters), [&](Runtime& s) -> Result<bool> {
                             const RunnableId r = runnableNamed(s, name);
                             if (r == kNone) return false;
                             if (s.schedule.runnables[r].kind != RunnableKind::kSubmitter) {
                               if (notSubmitter.empty()) notSubmitter = s.schedule.name;
                               return false;
                             }
                             if (auto once = refuseTwice(s, r, name); !once) return once.error();
                             s.cudaSubmitters[r] = registration;
                             return true;
                           });
  if (!ok && ok.error().code == ErrorCode::kNotFound && !notSubmitter.empty()) {
    return fail(ErrorCode::kNotFound, "runnable '" + session.primary().name + "." + name +
                                          "' is not a submitter in schedule '" + notSubmitter +
                                          "' (it has no Submits)");
  }
  return ok;
}

Result<void> registerStreamIn(ClientSession& session, const std::string& name, CUstream_st* stream) {
  const std::string what = "register CUDA stream '" + session.primary().name + "." + name + "'";
  if (auto ok = checkCudaStream(stream, what); !ok) return ok;
  return registerInEach(session, "CUDA stream '" + name + "' is not a CUDA_STREAM resource", name,
                        namesOfClient(session, NameKind::kStreams),
                        [&](Runtime& s) { return registerStreamInSchedule(s, name, stream, what); });
}

Result<void> registerEngineQueueIn(ClientSession& session, const std::string& name,
                                   const EngineQueueRegistration& queue) {
  const std::string what = "register engine queue '" + session.primary().name + "." + name + "'";
  return registerInEach(session, "engine queue '" + name + "' is not a DLA_HANDLE or PVA_STREAM resource", name,
                        namesOfClient(session, NameKind::kQueues),
                        [&](Runtime& s) { return registerQueueInSchedule(s, name, queue, what); });
}

// The runnables this client must register: CPU functions and submitters its instances run
// (round-robin steps included).
std::vector<RunnableId> requiredRunnables(const Runtime& rt) {
  IdVector<RunnableId, char> needed(rt.schedule.runnables.size(), 0);
  for (const InstanceInfo& inst : rt.schedule.instances) {
    const RunnableInfo& r = rt.schedule.runnables[inst.runnable];
    if (r.client != rt.clientIndex) continue;
    if (r.kind == RunnableKind::kAliasGroup) {
      for (const RunnableId step : r.steps) {
        if (needed.contains(step) && needsRegistration(rt.schedule.runnables[step])) needed[step] = 1;
      }
    } else if (needsRegistration(r)) {
      needed[inst.runnable] = 1;
    }
  }
  std::vector<RunnableId> out;
  for (RunnableId r : needed.ids()) {
    if (needed[r]) out.push_back(r);
  }
  return out;
}

}  // namespace tactus::client
