/* Compiles <tactus/stm.h> as C99 (the build fails if the header is not valid C). */
#include "tactus/stm.h"

stmErrorCode_t tactusStmCCheck(void);

stmErrorCode_t tactusStmCCheck(void) {
  stmRunnableInfo_t info;
  info.epochIterations = 0;
  info.scheduleId = 0;
  (void)info;
  return STM_SUCCESS;
}
