// The engine seam: how a worker executes one instance on its hardware resource. CPU workers call
// the registered function. Submittees of a submitter registered as a CUDA submitter run on the
// GPU engine (cuda_engine.hpp): the submitter's CPU worker hands them to the stream and their
// completion is signalled by the GPU itself. Submittees of a submitter registered as a plain CPU
// runnable (no CUDA in the client) keep the NullEngine: the worker that owns the GPU resource
// waits for the submittee's predecessors (its submitter among them), "runs" it through
// NullEngine and marks it done, so dependents still wait for the submitter and GPU-timeline order.
#pragma once

#include <functional>

#include "tactus/client.hpp"
#include "tactus/core/ids.hpp"

struct CUstream_st;  // CUDA's opaque stream type (cudaStream_t is a pointer to it)

namespace tactus::client {

/// A registered CPU runnable.
struct Registration {
  bool registered = false;
  RunnableFunction function = nullptr;
  void* userdata = nullptr;
  std::function<void()> callable;
  /// Runs it: the function, else the callable (nothing when neither is set).
  void call() const {
    if (function != nullptr) function(userdata);
    else if (callable) callable();
  }
};

/// A registered CUDA submitter (cuda_engine.hpp runs it); the stream type stays opaque here.
struct CudaSubmitterRegistration {
  bool registered = false;
  void (*function)(void* userdata, CUstream_st* stream) = nullptr;
  void* userdata = nullptr;
  std::function<void(CUstream_st*)> callable;
  /// Runs it on `stream`: the function, else the callable (nothing when neither is set).
  void call(CUstream_st* stream) const {
    if (function != nullptr) function(userdata, stream);
    else if (callable) callable(stream);
  }
};

/// One execution request.
struct EngineTask {
  InstanceId instance{};  ///< the instance
  RunnableId runnable{};  ///< the runnable to run (the round-robin step), or kNone for nothing
  const RuntimeInfo* info = nullptr;
};

/// Executes instances of one hardware resource synchronously: execute() returns when the
/// instance may be marked done. CUDA submitters do not come through here: CudaEngine enqueues
/// their work and the GPU itself signals the submittee's completion.
class Engine {
 public:
  virtual ~Engine() = default;
  /// Runs the task to completion.
  virtual void execute(const EngineTask& task) = 0;
};

/// Calls registered CPU functions; an unregistered runnable (allowed by the master) does nothing.
class CpuEngine final : public Engine {
 public:
  explicit CpuEngine(const IdVector<RunnableId, Registration>& registrations) : registrations_(registrations) {}
  void execute(const EngineTask& task) override;

 private:
  const IdVector<RunnableId, Registration>& registrations_;
};

/// For a GPU worker whose submittees were submitted by plain CPU runnables (a client without
/// CUDA): there is no GPU work to run, so the submittee completes once its predecessors have.
class NullEngine final : public Engine {
 public:
  void execute(const EngineTask&) override {}
};

}  // namespace tactus::client
