// The client's registration rules: which runnables a client must register, and registering
// runnables, CUDA submitters and streams in its schedules by their names in the graph.
#include "registration.hpp"

#include <algorithm>

#include "tactus/core/text.hpp"

namespace tactus::client {

// Whether the runnable is one a client must register (CPU functions and submitters).
bool needsRegistration(const RunnableInfo& r) {
  return r.kind == RunnableKind::kCpu || r.kind == RunnableKind::kSubmitter;
}

namespace {

// Registers in one schedule: true when the schedule has the runnable for this client.
Result<bool> registerInSchedule(Runtime& rt, const std::string& name, const Registration& registration) {
  if (!rt.member) return false;
  for (RunnableId r : rt.schedule.runnables.ids()) {
    const RunnableInfo& info = rt.schedule.runnables[r];
    if (info.client != rt.clientIndex || info.name != name || !needsRegistration(info)) continue;
    if (rt.registrations[r].registered || rt.cudaSubmitters[r].registered) {
      return fail(ErrorCode::kAlreadyExists, "runnable '" + rt.name + "." + name + "' is already registered");
    }
    rt.registrations[r] = registration;
    rt.registrations[r].registered = true;
    return true;
  }
  return false;
}

}  // namespace

Result<void> registerRunnableIn(Runtime& rt, const std::string& name, const Registration& registration) {
  if (rt.scheduleCount > 1) {  // the union over the schedules: registered in each that has it
    bool found = false;
    for (Runtime* mode : allModes(rt)) {
      auto one = registerInSchedule(*mode, name, registration);
      if (!one) return one.error();
      found = found || *one;
    }
    if (found) return {};
    return fail(ErrorCode::kNotFound, "runnable '" + name + "' is not a CPU runnable of client '" + rt.name +
                                          "' in any of the instance's " + std::to_string(rt.scheduleCount) +
                                          " schedules");
  }
  auto one = registerInSchedule(rt, name, registration);
  if (!one) return one.error();
  if (*one) return {};
  return fail(ErrorCode::kNotFound, "runnable '" + name + "' is not a CPU runnable of client '" + rt.name +
                                        "' in schedule '" + rt.schedule.name + "'");
}

Result<void> registerCudaSubmitterIn(Runtime& rt, const std::string& name, CudaSubmitterRegistration registration) {
  for (RunnableId r : rt.schedule.runnables.ids()) {
    const RunnableInfo& info = rt.schedule.runnables[r];
    if (info.client != rt.clientIndex || info.name != name) continue;
    if (info.kind != RunnableKind::kSubmitter) {
      return fail(ErrorCode::kNotFound, "runnable '" + rt.name + "." + name + "' is not a submitter in schedule '" +
                                            rt.schedule.name + "' (it has no Submits)");
    }
    if (rt.registrations[r].registered || rt.cudaSubmitters[r].registered) {
      return fail(ErrorCode::kAlreadyExists, "runnable '" + rt.name + "." + name + "' is already registered");
    }
    registration.registered = true;
    rt.cudaSubmitters[r] = std::move(registration);
    return {};
  }
  return fail(ErrorCode::kNotFound, "runnable '" + name + "' is not a submitter of client '" + rt.name +
                                        "' in schedule '" + rt.schedule.name + "'");
}

Result<void> registerStreamIn(Runtime& rt, const std::string& name, CUstream_st* stream) {
  ResourceId found = kNone;
  for (ResourceId r : rt.schedule.resources.ids()) {
    const ResourceInfo& info = rt.schedule.resources[r];
    if (info.kind == ResourceKind::kCudaStream && info.client == rt.clientIndex && info.name == name) found = r;
  }
  if (found == kNone) {
    return fail(ErrorCode::kNotFound, "CUDA stream '" + name + "' is not a CUDA_STREAM resource of client '" + rt.name +
                                          "' in schedule '" + rt.schedule.name + "'");
  }
  const std::string what = "register CUDA stream '" + rt.name + "." + name + "'";
  if (auto ok = checkCudaStream(stream, what); !ok) return ok;
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
  return {};
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
