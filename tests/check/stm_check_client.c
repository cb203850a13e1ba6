/* tactus-check-stm-client: an STM C client (<tactus/stm.h>) for the tactus-check tests: runnable
 * Alloc allocates (malloc), runnable Quiet keeps the contract.
 *   tactus-check-stm-client CLIENT DISCRIMINATOR (a number: the instance name the master was given) */
#include <stdio.h>
#include <stdlib.h>
#include <tactus/stm.h>

static void* volatile gKeep;
static volatile long gSink;

void stmCheckAlloc(void* userdata) {
  (void)userdata;
  gKeep = malloc(128);
  free(gKeep);
}

void stmCheckQuiet(void* userdata) {
  (void)userdata;
  gSink = gSink + 1;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: tactus-check-stm-client CLIENT INSTANCE\n");
    return 2;
  }
  if (stmClientInitWithDiscriminator(argv[1], (int32_t)atoi(argv[2])) != STM_SUCCESS) return 3;
  if (stmRegisterCpuRunnable(stmCheckAlloc, "Alloc", NULL) != STM_SUCCESS) return 4;
  if (stmRegisterCpuRunnable(stmCheckQuiet, "Quiet", NULL) != STM_SUCCESS) return 4;
  const stmErrorCode_t rc = stmEnterScheduler();
  printf("stm-enter: %s\n", stmErrorCodeToString(rc));
  stmClientExit();
  return rc == STM_SUCCESS ? 0 : 10;
}
