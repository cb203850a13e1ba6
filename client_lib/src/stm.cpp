// The STM C API (tactus/stm.h) implemented over the C++ API (tactus/client.hpp).
#include "tactus/stm.h"

#include <new>
#include <string>

#include "stm_errors.hpp"
#include "tactus/channel.hpp"
#include "tactus/client.hpp"
#include "tactus/cuda.hpp"
#include "tactus/engine_queue.hpp"

namespace {

thread_local std::string tLastMessage;

stmErrorCode_t toStm(const tactus::Error& error) {
  tLastMessage = error.message;
  return tactus::client::stmClientError(error.code);
}

stmErrorCode_t toStm(const tactus::Result<void>& result) {
  if (result) return STM_SUCCESS;
  return toStm(result.error());
}

bool gInitialized = false;  // guarded by the C++ layer's own checks; only used for NOT_INITIALIZED

stmErrorCode_t initOn(const char* clientName, const std::string& instance) {
  if (clientName == nullptr) {
    tLastMessage = "stmClientInit: null client name";
    return STM_ERROR_BAD_PARAMETER;
  }
  tactus::InitOptions options;
  options.instance = instance;
  const stmErrorCode_t code = toStm(tactus::init(clientName, options));
  if (code == STM_SUCCESS) gInitialized = true;
  return code;
}

// The checks every registration call makes: its arguments (`nullArgument`: one is null, `what`
// says which) and that stmClientInit was called. STM_SUCCESS (0, false) when they pass.
stmErrorCode_t refuse(const char* call, bool nullArgument, const char* what) {
  if (nullArgument) {
    tLastMessage = std::string(call) + ": null " + what;
    return STM_ERROR_BAD_PARAMETER;
  }
  if (!gInitialized) {
    tLastMessage = std::string(call) + ": stmClientInit was not called";
    return STM_ERROR_NOT_INITIALIZED;
  }
  return STM_SUCCESS;
}

// A registration refused because the library was built without CUDA is STM's NOT_SUPPORTED.
stmErrorCode_t cudaCall(stmErrorCode_t code) {
  return code == STM_ERROR_INVALID_STATE && tLastMessage.find("built without CUDA") != std::string::npos
             ? STM_ERROR_NOT_SUPPORTED
             : code;
}

}  // namespace

extern "C" {

stmErrorCode_t stmClientInit(const char* clientName) {
  return initOn(clientName, "");  // init reads TACTUS_INSTANCE, else "default"
}

stmErrorCode_t stmClientInitWithDiscriminator(const char* clientName, int32_t discriminator) {
  return initOn(clientName, discriminator < 0 ? std::string("default") : std::to_string(discriminator));
}

stmErrorCode_t stmRegisterCpuRunnable(stmRunnable_t func, const char* runnableId, void* userdata) {
  if (const stmErrorCode_t code =
          refuse("stmRegisterCpuRunnable", func == nullptr || runnableId == nullptr, "function or runnable id"))
    return code;
  return toStm(tactus::registerRunnable(runnableId, func, userdata));
}

stmErrorCode_t stmRegisterCudaSubmitter(stmCudaSubmitter_t func, const char* runnableId, void* userdata) {
  if (const stmErrorCode_t code =
          refuse("stmRegisterCudaSubmitter", func == nullptr || runnableId == nullptr, "function or runnable id"))
    return code;
  return cudaCall(toStm(tactus::cuda::registerSubmitter(runnableId, func, userdata)));
}

stmErrorCode_t stmRegisterCudaResource(const char* resourceName, cudaStream_t stream) {
  if (const stmErrorCode_t code = refuse("stmRegisterCudaResource", resourceName == nullptr, "resource name"))
    return code;
  const tactus::Result<void> result = tactus::cuda::registerStream(resourceName, stream);
  if (!result && result.error().code == tactus::ErrorCode::kIo) {  // a CUDA call failed
    tLastMessage = result.error().message;
    return STM_ERROR_CUDA;
  }
  return cudaCall(toStm(result));
}

stmErrorCode_t tactusRegisterEngineQueue(const char* resourceName, void* queue,
                                         const tactusEngineQueueAdapter_t* adapter) {
  if (const stmErrorCode_t code = refuse("tactusRegisterEngineQueue", resourceName == nullptr || adapter == nullptr,
                                         "resource name or adapter"))
    return code;
  const tactus::EngineQueueAdapter a{adapter->context, adapter->waitValue, adapter->signalValue};
  return toStm(tactus::registerEngineQueue(resourceName, queue, a));
}

stmErrorCode_t stmRegisterCallBack(stmScheduleSwitchCallback_t func, void* userdata) {
  if (const stmErrorCode_t code = refuse("stmRegisterCallBack", func == nullptr, "function")) return code;
  return toStm(tactus::registerSwitchCallback(
      [func, userdata](std::uint16_t schedule, std::uint16_t hyperepoch) { func(schedule, hyperepoch, userdata); }));
}

stmErrorCode_t stmEnterScheduler(void) {
  if (const stmErrorCode_t code = refuse("stmEnterScheduler", false, "")) return code;
  const tactus::RunOutcome outcome = tactus::enterScheduler();
  tLastMessage = outcome.message;
  switch (outcome.status) {
    case tactus::RunStatus::kFrameLimit:
    case tactus::RunStatus::kExitRequested:
    case tactus::RunStatus::kStoppedBySignal: return STM_SUCCESS;
    case tactus::RunStatus::kTimeout: return STM_ERROR_TIMEOUT;
    case tactus::RunStatus::kPeerDied: return STM_ERROR_GENERIC;
    case tactus::RunStatus::kError:
      return outcome.message.find("was not registered") != std::string::npos ? STM_ERROR_NOT_FOUND : STM_ERROR_GENERIC;
  }
  return STM_ERROR_GENERIC;
}

stmErrorCode_t stmGetRuntimeInfo(stmRunnableInfo_t* info) {
  if (info == nullptr) return STM_ERROR_BAD_PARAMETER;
  auto r = tactus::runtimeInfo();
  if (!r) return toStm(r.error());
  info->epochIterations = static_cast<uint32_t>(r->epochIteration);
  info->scheduleId = r->scheduleId;
  return STM_SUCCESS;
}

stmErrorCode_t tactusLogicalNowNs(int64_t* ns) {
  if (ns == nullptr) {
    tLastMessage = "tactusLogicalNowNs: null ns";
    return STM_ERROR_BAD_PARAMETER;
  }
  auto r = tactus::logicalNowNs();
  if (!r) return toStm(r.error());
  *ns = *r;
  return STM_SUCCESS;
}

stmErrorCode_t stmExitScheduler(void) {
  if (!gInitialized) return STM_ERROR_NOT_INITIALIZED;
  tactus::exitScheduler();
  return STM_SUCCESS;
}

void stmClientExit(void) {
  tactus::shutdown();
  gInitialized = false;
}

const char* stmErrorCodeToString(stmErrorCode_t code) {
  switch (code) {
    case STM_SUCCESS: return "STM_SUCCESS";
    case STM_ERROR_BAD_PARAMETER: return "STM_ERROR_BAD_PARAMETER";
    case STM_ERROR_NOT_INITIALIZED: return "STM_ERROR_NOT_INITIALIZED";
    case STM_ERROR_NOT_SUPPORTED: return "STM_ERROR_NOT_SUPPORTED";
    case STM_ERROR_TIMEOUT: return "STM_ERROR_TIMEOUT";
    case STM_ERROR_NOT_FOUND: return "STM_ERROR_NOT_FOUND";
    case STM_ERROR_INVALID_STATE: return "STM_ERROR_INVALID_STATE";
    case STM_ERROR_GENERIC: return "STM_ERROR_GENERIC";
    case STM_ERROR_BAD_VALUE: return "STM_ERROR_BAD_VALUE";
    case STM_ERROR_CUDA: return "STM_ERROR_CUDA";
    case STM_ERROR_INSUFFICIENT_MEMORY: return "STM_ERROR_INSUFFICIENT_MEMORY";
    case STM_ERROR_BAD_STATE_TRANSITION: return "STM_ERROR_BAD_STATE_TRANSITION";
    case STM_ERROR_SCHEDULE_ID_INVALID: return "STM_ERROR_SCHEDULE_ID_INVALID";
  }
  return "STM_ERROR_UNKNOWN";
}

const char* tactusLastErrorMessage(void) { return tLastMessage.c_str(); }

struct tactusChannel {
  tactus::Channel channel;
};

stmErrorCode_t tactusChannelFind(const char* name, tactusChannel** channel) {
  if (const stmErrorCode_t code = refuse("tactusChannelFind", name == nullptr || channel == nullptr, "name or channel"))
    return code;
  auto found = tactus::Channel::find(name);
  if (!found) return toStm(found.error());
  *channel = new (std::nothrow) tactusChannel{std::move(*found)};
  return *channel != nullptr ? STM_SUCCESS : STM_ERROR_INSUFFICIENT_MEMORY;
}

stmErrorCode_t tactusChannelWrite(const tactusChannel* channel, void** data, uint64_t* size) {
  if (channel == nullptr || data == nullptr) return STM_ERROR_BAD_PARAMETER;
  auto buffer = channel->channel.write();
  if (!buffer) return toStm(buffer.error());
  *data = buffer->data();
  if (size != nullptr) *size = buffer->size();
  return STM_SUCCESS;
}

stmErrorCode_t tactusChannelRead(const tactusChannel* channel, tactusVersion_t* version) {
  if (channel == nullptr || version == nullptr) return STM_ERROR_BAD_PARAMETER;
  auto v = channel->channel.read();
  if (!v) return toStm(v.error());
  *version = tactusVersion_t{
      v->data,      v->size,    static_cast<tactusVersionStatus_t>(v->status), v->writerInstance, v->writerIteration,
      v->writtenNs, v->sourceNs};
  return STM_SUCCESS;
}

void tactusChannelFree(tactusChannel* channel) { delete channel; }

}  // extern "C"
