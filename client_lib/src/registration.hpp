// Registration in the client's schedules (registration.cpp): the checks on names, kinds and
// duplicates, the union over a master's several schedules, and the runnables a client must
// register before it enters.
#pragma once

#include <string>
#include <vector>

#include "runtime.hpp"

namespace tactus::client {

/// Whether a client registers this runnable itself (CPU functions and submitters do).
bool needsRegistration(const RunnableInfo& r);
/// Registers CPU runnable `name` of the session's client: in its schedule, or in every schedule of
/// the instance that has it (kNotFound when none does, kAlreadyExists when registered already).
Result<void> registerRunnableIn(ClientSession& session, const std::string& name, const Registration& registration);
/// Registers CUDA submitter `name` of the session's client (kNotFound when it is no submitter).
Result<void> registerCudaSubmitterIn(ClientSession& session, const std::string& name,
                                     CudaSubmitterRegistration registration);
/// Registers the client-local CUDA stream `name` (checked: non-blocking, not twice, within its
/// GPU's stream limit).
Result<void> registerStreamIn(ClientSession& session, const std::string& name, CUstream_st* stream);
/// Registers the client-local DLA_HANDLE or PVA_STREAM `name` as an engine queue (not twice,
/// not one queue under two names).
Result<void> registerEngineQueueIn(ClientSession& session, const std::string& name,
                                   const EngineQueueRegistration& queue);
/// The runnables rt's client must register before it enters: the CPU functions and submitters its
/// instances run (round-robin steps included), ascending.
std::vector<RunnableId> requiredRunnables(const Runtime& rt);

}  // namespace tactus::client
