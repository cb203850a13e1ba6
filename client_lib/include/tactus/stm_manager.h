/* STM compatibility: NVIDIA System Task Manager's schedule-manager C API over libtactus
 * (<tactus/manager.hpp>). Compiles as C and C++. Every call is synchronous. */
#ifndef TACTUS_STM_MANAGER_H
#define TACTUS_STM_MANAGER_H

#include <stdint.h>

#include "tactus/stm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Attaches as the schedule manager `name` (the master's -N); the instance is $TACTUS_INSTANCE,
 *  else "default". Blocks until a master runs. */
stmErrorCode_t stmScheduleManagerInit(const char* name);
/** As stmScheduleManagerInit, on the instance named by the decimal `discriminator`. */
stmErrorCode_t stmScheduleManagerInitWithDiscriminator(const char* name, int32_t discriminator);
/** Starts schedule `scheduleId`. STM_ERROR_SCHEDULE_ID_INVALID for an unknown identifier,
 *  STM_ERROR_BAD_STATE_TRANSITION while another runs. */
stmErrorCode_t stmStartSchedule(uint16_t scheduleId);
/** Stops schedule `scheduleId`; returns once every hyperepoch stopped. STM_ERROR_SCHEDULE_ID_INVALID,
 *  STM_ERROR_BAD_STATE_TRANSITION when it is not running. */
stmErrorCode_t stmStopSchedule(uint16_t scheduleId);
/** Starts `startScheduleId` and stops `stopScheduleId` per hyperepoch; returns once every hyperepoch
 *  switched. STM_ERROR_NOT_SUPPORTED when the schedules partition resources differently. */
stmErrorCode_t stmRollOverSchedule(uint16_t startScheduleId, uint16_t stopScheduleId);
/** Ends the run: every client returns from stmEnterScheduler with STM_SUCCESS. */
stmErrorCode_t stmScheduleManagerExit(void);
/** tactus extension: the message of the last failing manager call on this thread. */
const char* tactusManagerLastErrorMessage(void);

#ifdef __cplusplus
}
#endif

#endif /* TACTUS_STM_MANAGER_H */
