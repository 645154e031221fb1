/* tune_machine.h -- this machine as the tuner sees it (replay_tune): its
 * clock, its ceilings (the ridge point), the thread bindings that take
 * effect on it and the preemptions its threads suffer (its cores' layout:
 * exec_cpu_topology). Internal to replay/. */
#ifndef FATHOM_REPLAY_TUNE_MACHINE_H
#define FATHOM_REPLAY_TUNE_MACHINE_H
#include "exec/exec.h"

/* Seconds on the monotonic clock. */
double replay_tune_now_s(void);

/* A short sgemm (GFLOP/s) and triad (GB/s) at the process's threads: the
 * ridge point that splits memory- from compute-bound op types. The
 * triad's three arrays hold footprint bytes in all (the workload's
 * memory, as the engine's allocator counts it), clamped to
 * REPLAY_TUNE_TRIAD_MIN_MB and to twice the largest cache (64 MB where
 * sysfs does not say; at most REPLAY_TUNE_TRIAD_MAX_MB): the bandwidth
 * that streams over as much memory see, a cache's where the workload fits
 * in one (*triad_mb: the footprint measured). */
#define REPLAY_TUNE_TRIAD_MIN_MB 12
#define REPLAY_TUNE_TRIAD_MAX_MB 384
exec_status replay_tune_ceilings(size_t footprint, double *gflops, double *gbs, double *triad_mb);

/* The bindings that take effect here and place some thread count of 1 to
 * `cores` differently from each other, as exec_bind values into out (NONE
 * always, then CLOSE, then SPREAD); their number. *why says why none but
 * NONE takes effect (NULL where CLOSE does). */
int replay_tune_offered_binds(int cores, char *out, const char **why);

/* The process's involuntary context switches so far. */
long replay_tune_preemptions(void);
#endif
