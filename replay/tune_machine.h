/* tune_machine.h -- this machine as the tuner sees it (replay_tune): its
 * clock, its ceilings (the ridge point), the thread bindings that take
 * effect on it and the preemptions its threads suffer (its cores' layout:
 * exec_cpu_topology). Internal to replay/. */
#ifndef FATHOM_REPLAY_TUNE_MACHINE_H
#define FATHOM_REPLAY_TUNE_MACHINE_H
#include "exec/exec.h"

/* A short sgemm (GFLOP/s) and a read stream (GB/s) at the process's
 * threads: the ridge point that splits memory- from compute-bound op
 * types. The stream reads g's arenas (a workload's tensors, already
 * touched: no page faulted in anew), up to REPLAY_TUNE_STREAM_MAX_MB:
 * the bandwidth of the memory the workload's ops read, a cache's where it
 * fits in one (*stream_mb: what a pass read; 0 and *gbs 0 where g is NULL
 * or holds nothing), the best of five passes or of as many as read
 * REPLAY_TUNE_STREAM_READ_MB, two at least. */
#define REPLAY_TUNE_STREAM_MAX_MB 384
#define REPLAY_TUNE_STREAM_READ_MB 256 /* the stream's passes read this much in all, at least two of them */
exec_status replay_tune_ceilings(const exec_graph *g, double *gflops, double *gbs, double *stream_mb);

/* The bindings that take effect here and place some thread count of 1 to
 * `cores` differently from each other, as exec_bind values into out (NONE
 * always, then CLOSE, then SPREAD); their number. *why says why none but
 * NONE takes effect (NULL where CLOSE does). */
int replay_tune_offered_binds(int cores, char *out, const char **why);

/* The process's involuntary context switches so far. */
long replay_tune_preemptions(void);
#endif
