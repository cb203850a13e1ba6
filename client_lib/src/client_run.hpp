// A client's run, between enterScheduler's checks and its return (client.cpp keeps the API, the
// client's state and the stop signals): each schedule made ready to enter (registrations, engines,
// cores to pin to), the workers of every schedule started and watched, and how the run ended, read
// from the master's segment.
#pragma once

#include <optional>
#include <vector>

#include "runtime.hpp"
#include "tactus/client.hpp"

namespace tactus::client {

/// Makes schedule `rt` of the client (`primary`: its first) ready to enter: every runnable the
/// client runs there is registered, the cores its workers pin to exist, and its GPU and queue
/// engines are started when it has such submitters there. Returns the refusal, published to the
/// master, when it cannot enter.
std::optional<RunOutcome> prepareSchedule(Runtime& primary, Runtime& rt);

/// Ends the GPU and queue engines of the client's schedules `all` and publishes their statistics;
/// after a run that did not end `clean`, a segment that queued work may still touch stays mapped.
void endGpuEngines(const std::vector<Runtime*>& all, bool clean);

/// Runs the session's workers of every schedule it is in until they have all left, watching the
/// master and the segments meanwhile, and says how the run ended.
RunOutcome runWorkers(ClientSession& session);

}  // namespace tactus::client
