// TACTUS_TRACE(event, args...): one LTTng-UST tracepoint of provider `tactus` (tactus_tp.h names
// the events and their fields) where the build has -Dlttng=enabled (TACTUS_LTTNG=1), nothing at
// all otherwise: the arguments are not even evaluated. A private header (core/lttng): no public
// header includes it, so libtactus's API carries no LTTng type. Enabled but not recorded, a site
// costs one load and a predicted branch (the tracepoint's state word).
#pragma once

#if defined(TACTUS_LTTNG) && TACTUS_LTTNG
#include "tactus_tp.h"
#define TACTUS_TRACE(event, ...) lttng_ust_tracepoint(tactus, event, __VA_ARGS__)
#else
#define TACTUS_TRACE(event, ...) static_cast<void>(0)
#endif
