/* clock.h -- the one clock of fathom's own timings: CLOCK_MONOTONIC, the
 * clock LTTng stamps the trace with too, so an op's times and the trace's
 * events share one time base. Header-only: the trace probe uses it without
 * linking libfathom-base. */
#ifndef FATHOM_BASE_CLOCK_H
#define FATHOM_BASE_CLOCK_H
#include <stdint.h>
#include <time.h>

/* Now, in ns since an arbitrary origin (the machine's boot). */
static inline uint64_t base_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The same in seconds. */
static inline double base_now_s(void) { return (double)base_now_ns() * 1e-9; }

/* The CPU time of every thread of the process so far, in ns: a step's cost
 * on a machine that other processes load, where its wall time is theirs too. */
static inline uint64_t base_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU time so far, in ns: how long a run on this
 * thread alone took with the time other processes held its core left out. */
static inline uint64_t base_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#endif
