// The LTTng-UST tracepoint provider `tactus` (-Dlttng=enabled): frame releases and overruns (the
// master's releaser), runnable starts and ends (a client's worker), schedule switches (the master's
// statistics publisher, from the run's switch records) and channel writes (a writer run taking its
// buffer). Times are CLOCK_MONOTONIC nanoseconds, the clock of the event log and of LTTng's own
// timestamps. Included through tactus_trace.hpp only; never by a public header.
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tactus

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "tactus_tp.h"

#if !defined(TACTUS_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TACTUS_LTTNG_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

// The events as LTTng's documentation writes them:
// clang-format off

// Frame `frame` of epoch `epoch` released in hyperepoch iteration `iteration`.
LTTNG_UST_TRACEPOINT_EVENT(tactus, frame_release,
  LTTNG_UST_TP_ARGS(uint32_t, epoch, uint64_t, iteration, uint32_t, frame, int64_t, ideal_ns, int64_t, actual_ns),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, epoch, epoch)
    lttng_ust_field_integer(uint64_t, iteration, iteration)
    lttng_ust_field_integer(uint32_t, frame, frame)
    lttng_ust_field_integer(int64_t, ideal_ns, ideal_ns)
    lttng_ust_field_integer(int64_t, actual_ns, actual_ns)))

// Frame `frame` of `epoch` had not finished when its successor's release was due.
LTTNG_UST_TRACEPOINT_EVENT(tactus, overrun,
  LTTNG_UST_TP_ARGS(uint32_t, epoch, uint64_t, iteration, uint32_t, frame, int64_t, ideal_ns, int64_t, actual_ns),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, epoch, epoch)
    lttng_ust_field_integer(uint64_t, iteration, iteration)
    lttng_ust_field_integer(uint32_t, frame, frame)
    lttng_ust_field_integer(int64_t, ideal_ns, ideal_ns)
    lttng_ust_field_integer(int64_t, actual_ns, actual_ns)))

// A runnable instance's run begins (CPU runnables and engine runnables, in the worker).
LTTNG_UST_TRACEPOINT_EVENT(tactus, runnable_start,
  LTTNG_UST_TP_ARGS(uint32_t, instance, uint32_t, runnable, uint64_t, iteration, uint32_t, frame, int64_t, start_ns),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, instance, instance)
    lttng_ust_field_integer(uint32_t, runnable, runnable)
    lttng_ust_field_integer(uint64_t, iteration, iteration)
    lttng_ust_field_integer(uint32_t, frame, frame)
    lttng_ust_field_integer(int64_t, start_ns, start_ns)))

// A runnable instance's run ended (every kind: GPU runs at their observed end).
LTTNG_UST_TRACEPOINT_EVENT(tactus, runnable_end,
  LTTNG_UST_TP_ARGS(uint32_t, instance, uint32_t, runnable, uint64_t, iteration, int64_t, start_ns, int64_t, end_ns),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, instance, instance)
    lttng_ust_field_integer(uint32_t, runnable, runnable)
    lttng_ust_field_integer(uint64_t, iteration, iteration)
    lttng_ust_field_integer(int64_t, start_ns, start_ns)
    lttng_ust_field_integer(int64_t, end_ns, end_ns)))

// A schedule started (start = 1) or stopped (start = 0) on hyperepoch `hyperepoch`; `other` is the
// schedule it switched from or to (0xffffffff: none).
LTTNG_UST_TRACEPOINT_EVENT(tactus, schedule_switch,
  LTTNG_UST_TP_ARGS(uint8_t, start, uint32_t, schedule, uint32_t, hyperepoch, uint64_t, iteration, uint32_t, other,
                    int64_t, taken_ns, int64_t, at_ns),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint8_t, start, start)
    lttng_ust_field_integer(uint32_t, schedule, schedule)
    lttng_ust_field_integer(uint32_t, hyperepoch, hyperepoch)
    lttng_ust_field_integer(uint64_t, iteration, iteration)
    lttng_ust_field_integer(uint32_t, other, other)
    lttng_ust_field_integer(int64_t, taken_ns, taken_ns)
    lttng_ust_field_integer(int64_t, at_ns, at_ns)))

// Writer instance `instance` took its buffer of channel `channel` (the schedule's channel index)
// in hyperepoch iteration `iteration`.
LTTNG_UST_TRACEPOINT_EVENT(tactus, channel_write,
  LTTNG_UST_TP_ARGS(uint32_t, channel, uint32_t, instance, uint64_t, iteration),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(uint32_t, channel, channel)
    lttng_ust_field_integer(uint32_t, instance, instance)
    lttng_ust_field_integer(uint64_t, iteration, iteration)))

// clang-format on

#endif  // TACTUS_LTTNG_TP_H

#include <lttng/tracepoint-event.h>
