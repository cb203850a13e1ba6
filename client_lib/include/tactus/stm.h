/* STM compatibility: NVIDIA System Task Manager's client C API over libtactus, so an STM client
 * builds by changing its include to <tactus/stm.h> and linking -ltactus. Compiles as C and C++,
 * without CUDA headers (cudaStream_t is declared here as CUDA declares it). The CUDA functions
 * return STM_ERROR_NOT_SUPPORTED when libtactus was built without CUDA. */
#ifndef TACTUS_STM_H
#define TACTUS_STM_H

#include <stdint.h>

/* CUDA's own declaration of cudaStream_t (driver_types.h), unless a CUDA header came first. */
#if !defined(__DRIVER_TYPES_H__) && !defined(TACTUS_CUDA_STANDIN_RUNTIME_API_H)
typedef struct CUstream_st* cudaStream_t;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** STM's error codes, in STM's order. */
typedef enum stmErrorCode_t {
  STM_SUCCESS = 0,                    /**< the call succeeded */
  STM_ERROR_BAD_PARAMETER = 1,        /**< a null or malformed argument */
  STM_ERROR_NOT_INITIALIZED = 2,      /**< stmClientInit was not called */
  STM_ERROR_NOT_SUPPORTED = 3,        /**< not available in this build */
  STM_ERROR_TIMEOUT = 4,              /**< a wait ran out (a client did not come) */
  STM_ERROR_NOT_FOUND = 5,            /**< no such client or runnable in the schedule; unregistered runnable */
  STM_ERROR_INVALID_STATE = 6,        /**< call at the wrong time (registration after enter, info outside a runnable) */
  STM_ERROR_GENERIC = 7,              /**< anything else (a peer died: see tactusLastErrorMessage) */
  STM_ERROR_BAD_VALUE = 8,            /**< a value the runtime cannot accept (duplicate registration) */
  STM_ERROR_CUDA = 9,                 /**< a CUDA call failed */
  STM_ERROR_INSUFFICIENT_MEMORY = 10, /**< out of memory */
  STM_ERROR_BAD_STATE_TRANSITION = 11, /**< e.g. entering the scheduler twice */
  STM_ERROR_SCHEDULE_ID_INVALID = 12   /**< unknown schedule identifier */
} stmErrorCode_t;

/** A CPU runnable. */
typedef void (*stmRunnable_t)(void* userdata);

/** A CUDA submitter: enqueues its submittee's work on `stream` and returns without waiting. */
typedef void (*stmCudaSubmitter_t)(void* userdata, cudaStream_t stream);

/** A schedule-switch callback: during a rollover, called once per hyperepoch before the new
 *  schedule's first frame there, with the starting schedule's identifier and the hyperepoch's id. */
typedef void (*stmScheduleSwitchCallback_t)(uint16_t startScheduleId, uint16_t hyperepochId, void* userdata);

/** What a runnable may ask about its frame. */
typedef struct stmRunnableInfo_t {
  uint32_t epochIterations; /**< frames of the runnable's epoch before this one */
  uint16_t scheduleId;      /**< the running schedule's identifier */
} stmRunnableInfo_t;

/** Attaches as `clientName`; blocks until a master runs. The instance is $TACTUS_INSTANCE, else "default". */
stmErrorCode_t stmClientInit(const char* clientName);
/** As stmClientInit, on the instance named by the decimal `discriminator` (master -D <discriminator>);
 *  a negative discriminator means the default instance. */
stmErrorCode_t stmClientInitWithDiscriminator(const char* clientName, int32_t discriminator);
/** Registers a CPU runnable by its client-local name in the graph. */
stmErrorCode_t stmRegisterCpuRunnable(stmRunnable_t func, const char* runnableId, void* userdata);
/** Registers a CUDA submitter by its client-local name in the graph. */
stmErrorCode_t stmRegisterCudaSubmitter(stmCudaSubmitter_t func, const char* runnableId, void* userdata);
/** Registers a CUDA stream by its client-local resource name (`CUDA_STREAM0`). Refused:
 *  STM_ERROR_BAD_PARAMETER for a default or blocking stream, STM_ERROR_NOT_FOUND for a name the
 *  graph does not have, STM_ERROR_BAD_VALUE for a name or stream registered twice or more streams
 *  than the device takes, STM_ERROR_CUDA when a CUDA call fails. */
stmErrorCode_t stmRegisterCudaResource(const char* resourceName, cudaStream_t stream);
/** Registers a schedule-switch callback (see stmScheduleSwitchCallback_t); before stmEnterScheduler. */
stmErrorCode_t stmRegisterCallBack(stmScheduleSwitchCallback_t func, void* userdata);
/** Runs this client's part of the schedule until the run ends: STM_SUCCESS on frame limit, exit
 *  request or signal; STM_ERROR_TIMEOUT when a client did not come; STM_ERROR_NOT_FOUND for an
 *  unregistered runnable; STM_ERROR_GENERIC when a peer died. */
stmErrorCode_t stmEnterScheduler(void);
/** Inside a CPU runnable: its frame's information. */
stmErrorCode_t stmGetRuntimeInfo(stmRunnableInfo_t* info);
/** tactus extension: inside a runnable, the logical clock (tactus::logicalNowNs in
 *  <tactus/client.hpp>): its frame's ideal release time in CLOCK_MONOTONIC ns, and under a replay
 *  the recorded run's value for the same frame. STM_ERROR_BAD_PARAMETER for a null `ns`,
 *  STM_ERROR_INVALID_STATE outside a runnable, STM_ERROR_NOT_FOUND when a replay's recording holds
 *  no release of the frame. */
stmErrorCode_t tactusLogicalNowNs(int64_t* ns);
/** Makes every client return from stmEnterScheduler at the next boundary; async-signal-safe. */
stmErrorCode_t stmExitScheduler(void);
/** Detaches; stmClientInit may be called again. */
void stmClientExit(void);
/** The name of an error code ("STM_ERROR_TIMEOUT"). */
const char* stmErrorCodeToString(stmErrorCode_t code);

/** tactus extension (STM has no such call): an engine's in-order queue (a DLA handle, a PVA stream)
 *  driven through two functions, as tactus drives a CUDA stream with cuStreamWaitValue64 and
 *  cuStreamWriteValue64. Both only enqueue and return 0 on success (anything else stops the run):
 *  waitValue: the queue runs nothing after it until *fence >= value (unsigned 64-bit);
 *  signalValue: the queue stores *fence = value once the work queued before it has ended.
 *  The fences are 64-bit words in the run's shared memory that tactus chooses; see
 *  <tactus/engine_queue.hpp> for the order of the calls around a submitter. */
typedef struct tactusEngineQueueAdapter_t {
  void* context; /**< passed back to both functions */
  int (*waitValue)(void* context, void* queue, const volatile uint64_t* fence, uint64_t value);
  int (*signalValue)(void* context, void* queue, volatile uint64_t* fence, uint64_t value);
} tactusEngineQueueAdapter_t;
/** tactus extension: registers `queue` as the client's DLA_HANDLE or PVA_STREAM resource
 *  `resourceName`; its submitters register with stmRegisterCpuRunnable. STM_ERROR_BAD_PARAMETER for
 *  a null name, queue, adapter or function, STM_ERROR_NOT_FOUND for a name the graph does not have,
 *  STM_ERROR_BAD_VALUE for a name or queue registered twice. A scheduled queue left unregistered
 *  makes stmEnterScheduler refuse, naming it. */
stmErrorCode_t tactusRegisterEngineQueue(const char* resourceName, void* queue,
                                         const tactusEngineQueueAdapter_t* adapter);

/** tactus extension: a channel of the schedule (the graph's `Channels`; <tactus/channel.hpp> is the
 *  C++ API): zero-copy buffers in the run's shared memory, each reader run seeing the writer run
 *  the schedule names. Opaque; found once by name after stmClientInit, freed with tactusChannelFree. */
typedef struct tactusChannel tactusChannel;
/** What a reader run's version of a channel holds. */
typedef enum tactusVersionStatus_t {
  TACTUS_VERSION_OK = 0,             /**< the version the schedule names; `data` points at it */
  TACTUS_VERSION_NO_VERSION_YET = 1, /**< its writer run comes before the run's first iteration */
  TACTUS_VERSION_NOT_WRITTEN = 2     /**< its writer run was skipped or did not take its buffer; `data` is NULL */
} tactusVersionStatus_t;
/** A reader run's version of a channel (see tactus::Version in <tactus/channel.hpp>). */
typedef struct tactusVersion_t {
  const void* data;             /**< read-only until the run ends; NULL unless TACTUS_VERSION_OK */
  uint64_t size;                /**< bytes of the channel's buffers */
  tactusVersionStatus_t status; /**< see tactusVersionStatus_t */
  uint32_t writerInstance;      /**< the writer run the schedule names: its instance */
  uint64_t writerIteration;     /**< and its hyperepoch iteration */
  int64_t writtenNs;            /**< CLOCK_MONOTONIC ns at which it took its buffer */
  int64_t sourceNs;             /**< frame release (CLOCK_MONOTONIC ns) of the oldest source data in it */
} tactusVersion_t;
/** tactus extension: finds channel `name` (after stmClientInit). STM_ERROR_NOT_FOUND for a name the
 *  schedule does not declare (tactusLastErrorMessage guesses the intended one). */
stmErrorCode_t tactusChannelFind(const char* name, tactusChannel** channel);
/** tactus extension: inside the channel's writer runnable, its buffer for this run, to fill before
 *  the run ends. STM_ERROR_INVALID_STATE outside a runnable, STM_ERROR_BAD_PARAMETER in a runnable
 *  that does not write the channel. */
stmErrorCode_t tactusChannelWrite(const tactusChannel* channel, void** data, uint64_t* size);
/** tactus extension: inside a reader runnable of the channel, the version the schedule names for
 *  this run; check `status` before `data`. Errors as tactusChannelWrite. */
stmErrorCode_t tactusChannelRead(const tactusChannel* channel, tactusVersion_t* version);
/** tactus extension: frees what tactusChannelFind returned (NULL: nothing). */
void tactusChannelFree(tactusChannel* channel);
/** tactus extension: the message of the last failing call on this thread (or of the last run's end). */
const char* tactusLastErrorMessage(void);

#ifdef __cplusplus
}
#endif

#endif /* TACTUS_STM_H */
