/* modes_manager: the schedule manager of the two-mode pipeline, in C against STM's manager API
 * (<tactus/stm_manager.h>): start the full mode, roll over to the light mode and back, end the run.
 *
 *   usage: tactus-sample-modes-manager INSTANCE      (the master's -D; its -N must be "modes") */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <tactus/stm_manager.h>

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static int check(const char* what, stmErrorCode_t rc) {
  printf("%s: %s\n", what, stmErrorCodeToString(rc));
  if (rc != STM_SUCCESS) fprintf(stderr, "modes_manager: %s: %s\n", what, tactusManagerLastErrorMessage());
  return rc == STM_SUCCESS;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tactus-sample-modes-manager INSTANCE\n");
    return 2;
  }
  if (setenv("TACTUS_INSTANCE", argv[1], 1) != 0) return 1;
  if (!check("init", stmScheduleManagerInit("modes"))) return 1;
  if (!check("start full (101)", stmStartSchedule(101))) return 1;
  pause_ms(200);
  if (!check("roll over to light (102)", stmRollOverSchedule(102, 101))) return 1;
  pause_ms(200);
  /* A mistake the master refuses without disturbing the run: 101 is not running. */
  printf("stop 101 while light runs: %s\n", stmErrorCodeToString(stmStopSchedule(101)));
  if (!check("roll over to full (101)", stmRollOverSchedule(101, 102))) return 1;
  pause_ms(200);
  return check("exit", stmScheduleManagerExit()) ? 0 : 1;
}
