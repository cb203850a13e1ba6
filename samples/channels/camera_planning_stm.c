/* camera_planning_stm: the Planning client of schedules/camera_pipeline_chain.yaml in C, against
 * STM's API (<tactus/stm.h>) and its tactus extension for channels: Plan reads, in place, the
 * version of channel `Objects` that the schedule names, written by the C++ Sensing client
 * (camera_pipeline.cpp):
 *
 *   tactus-master -s camera.tsched -e 20 -D 7 &
 *   TACTUS_INSTANCE=7 tactus-sample-channels Sensing &
 *   tactus-sample-channels-stm 7
 *
 * usage: tactus-sample-channels-stm [DISCRIMINATOR]  (the master's -D; none: $TACTUS_INSTANCE) */
#include <tactus/stm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The head of what Detect writes (camera_pipeline.cpp's Objects). */
typedef struct ObjectsHead {
  uint64_t cameraFrame;
  int64_t capturedNs;
  uint32_t count;
} ObjectsHead;

static tactusChannel* gObjects = NULL;
static unsigned long gFresh = 0, gNoneYet = 0, gNotWritten = 0, gObjectsSeen = 0;
static uint64_t gLastFrame = 0;

static void plan(void* userdata) {
  tactusVersion_t v;
  (void)userdata;
  if (tactusChannelRead(gObjects, &v) != STM_SUCCESS) {
    fprintf(stderr, "Plan: %s\n", tactusLastErrorMessage());
    return;
  }
  if (v.status == TACTUS_VERSION_NO_VERSION_YET) {
    ++gNoneYet;
  } else if (v.status == TACTUS_VERSION_NOT_WRITTEN) {
    ++gNotWritten;
  } else {
    const ObjectsHead* head = (const ObjectsHead*)v.data;
    ++gFresh;
    gObjectsSeen += head->count;
    gLastFrame = head->cameraFrame;
  }
}

static void actuate(void* userdata) { (void)userdata; }

int main(int argc, char** argv) {
  stmErrorCode_t rc;
  if (argc > 1) {
    char* end = NULL;
    long d;
    errno = 0;
    d = strtol(argv[1], &end, 10);
    if (errno != 0 || end == argv[1] || *end != '\0' || d < 0 || d > 2147483647L) {
      fprintf(stderr, "tactus-sample-channels-stm: DISCRIMINATOR expects a number 0..2147483647, got '%s'\n", argv[1]);
      return 2;
    }
    rc = stmClientInitWithDiscriminator("Planning", (int32_t)d);
  } else {
    rc = stmClientInit("Planning");
  }
  if (rc != STM_SUCCESS) {
    fprintf(stderr, "tactus-sample-channels-stm: %s: %s\n", stmErrorCodeToString(rc), tactusLastErrorMessage());
    return 1;
  }
  if ((rc = tactusChannelFind("Objects", &gObjects)) != STM_SUCCESS ||
      (rc = stmRegisterCpuRunnable(plan, "Plan", NULL)) != STM_SUCCESS ||
      (rc = stmRegisterCpuRunnable(actuate, "Actuate", NULL)) != STM_SUCCESS) {
    fprintf(stderr, "tactus-sample-channels-stm: %s: %s\n", stmErrorCodeToString(rc), tactusLastErrorMessage());
    stmClientExit();
    return 1;
  }
  rc = stmEnterScheduler();
  printf("run ended (%s)\n", stmErrorCodeToString(rc));
  printf(
      "Plan read %lu versions of Objects (%lu before the first, %lu not written), %lu objects, last camera frame "
      "%llu\n",
      gFresh, gNoneYet, gNotWritten, gObjectsSeen, (unsigned long long)gLastFrame);
  tactusChannelFree(gObjects);
  stmClientExit();
  return rc == STM_SUCCESS ? 0 : 1;
}
