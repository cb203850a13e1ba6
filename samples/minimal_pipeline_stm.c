/* minimal_pipeline_stm: the minimal pipeline of schedules/minimal_cpu.yaml written against STM's C
 * API (<tactus/stm.h>), as an STM client is: only the include and the link line (-ltactus, or
 * `pkg-config --libs tactus`) differ from its STM build.
 *
 *   Main.Frame (every 10 ms)
 *
 *     Read --> Process --> Publish          (client "Pipeline", one process)
 *
 *   tactus-master -s minimal_cpu.tsched -e 100 -D 7 &
 *   tactus-sample-minimal-stm 7              (the discriminator: the master's -D)
 *
 * Without an argument the instance is $TACTUS_INSTANCE, else "default". */
#include <tactus/stm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* What the pipeline passes down and counts; the schedule orders the three runnables each frame. */
typedef struct Pipeline {
  unsigned long long reads, processes, publishes;
  unsigned long long sample, processed, checksum, outOfOrder;
} Pipeline;

static Pipeline gPipeline;

static void readRunnable(void* userdata) {
  Pipeline* p = (Pipeline*)userdata;
  stmRunnableInfo_t info;
  p->sample = ++p->reads;
  if (stmGetRuntimeInfo(&info) == STM_SUCCESS && info.epochIterations < 3) {
    printf("frame %u: Pipeline.Read -> %llu (schedule %u)\n", info.epochIterations, p->sample, info.scheduleId);
    fflush(stdout);
  }
}

static void processRunnable(void* userdata) {
  Pipeline* p = (Pipeline*)userdata;
  if (p->sample != p->reads) ++p->outOfOrder;
  p->processed = p->sample * 2;
  ++p->processes;
}

static void publishRunnable(void* userdata) {
  Pipeline* p = (Pipeline*)userdata;
  if (p->processed != p->reads * 2) ++p->outOfOrder;
  p->checksum += p->processed;
  ++p->publishes;
}

/* Parses the discriminator strictly: a whole decimal number 0..2147483647. Prints why and returns
 * 0 otherwise. */
static int parseDiscriminator(const char* text, int32_t* out) {
  char* end = NULL;
  long long v;
  errno = 0;
  v = strtoll(text, &end, 10);
  if (*text < '0' || *text > '9' || *end != '\0' || errno == ERANGE || v > 2147483647LL) {
    fprintf(stderr,
            "tactus-sample-minimal-stm: DISCRIMINATOR expects a number 0..2147483647 (the master's -D; leave it out "
            "for $TACTUS_INSTANCE or 'default'), got '%s'\n",
            text);
    return 0;
  }
  *out = (int32_t)v;
  return 1;
}

int main(int argc, char** argv) {
  stmErrorCode_t rc;
  int32_t discriminator = 0;
  if (argc > 2) {
    fprintf(stderr, "usage: tactus-sample-minimal-stm [DISCRIMINATOR]\n");
    return 2;
  }
  if (argc == 2 && !parseDiscriminator(argv[1], &discriminator)) return 2;
  rc = argc == 2 ? stmClientInitWithDiscriminator("Pipeline", discriminator) : stmClientInit("Pipeline");
  if (rc != STM_SUCCESS) {
    fprintf(stderr, "minimal-stm: init failed: %s: %s\n", stmErrorCodeToString(rc), tactusLastErrorMessage());
    return 1;
  }
  if ((rc = stmRegisterCpuRunnable(readRunnable, "Read", &gPipeline)) != STM_SUCCESS ||
      (rc = stmRegisterCpuRunnable(processRunnable, "Process", &gPipeline)) != STM_SUCCESS ||
      (rc = stmRegisterCpuRunnable(publishRunnable, "Publish", &gPipeline)) != STM_SUCCESS) {
    fprintf(stderr, "minimal-stm: registration failed: %s: %s\n", stmErrorCodeToString(rc), tactusLastErrorMessage());
    stmClientExit();
    return 1;
  }
  rc = stmEnterScheduler();
  printf("minimal-stm: run ended (%s): %s\n", stmErrorCodeToString(rc),
         rc == STM_SUCCESS ? "" : tactusLastErrorMessage());
  stmClientExit();
  printf("minimal-stm: ran Read %llu, Process %llu, Publish %llu times; checksum %llu; %llu out of order\n",
         gPipeline.reads, gPipeline.processes, gPipeline.publishes, gPipeline.checksum, gPipeline.outOfOrder);
  return rc == STM_SUCCESS && gPipeline.outOfOrder == 0 ? 0 : 1;
}
