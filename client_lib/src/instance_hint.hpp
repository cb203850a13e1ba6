// The instances other programs serve right now, as a hint for a client or a schedule manager that
// waits on an instance nobody serves (a wrong -D, TACTUS_INSTANCE or option).
#pragma once

#include <string>

namespace tactus::client {

/// "; <label>: 'a', 'b'" naming (at most five, then "...") the instances other than `instance`
/// whose segment `tactus_<name><suffix>` is in /dev/shm now, sorted; "" when there is none.
std::string otherInstancesHint(const std::string& instance, const std::string& suffix, const std::string& label);

}  // namespace tactus::client
