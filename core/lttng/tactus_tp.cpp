// The probes of provider `tactus` and its tracepoints' definitions, compiled into each module that
// has tracepoint sites (libtactus, tactus-master) where the build has -Dlttng=enabled.
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tactus_tp.h"
