/* tune.h -- `fathom tune`: from measurements to faster engine settings,
 * checked by measured runs (docs/design.md, "Tuning"; guidelines in fathom-tune(1)).
 *
 * The tuner drives a target through one interface: open an instance with
 * given knobs, run one step, close.  The target is a model (the driver's
 * cmd_tune.c) or a program rebuilt from a trace (replay_tune_trace_target).
 * It works in three steps.
 *
 * 1. Measure.  It profiles one step at each intra-op thread level: all
 *    cores first, then one thread, then the levels between, the most
 *    threads first.  A level is profiled only where its predicted cost
 *    leaves the budget room.  The engine's hooks time every op of the step.
 *    Each instance is warmed up and kept open as a candidate.  From the
 *    profiles it takes the op time per op type and level, the data flow's
 *    average parallelism (op time over critical path, at one thread where
 *    profiled), and the preemptions the profiled steps suffered.  It places
 *    each dominant op type's arithmetic intensity against this machine's
 *    ridge.  Only where an intensity leaves the bound in doubt does it
 *    measure the ceilings: a short sgemm and a read stream over the
 *    workload's tensors.
 *
 * 2. Propose.  It proposes values for each knob, with one line saying
 *    which measurement led there.  It ranks their combinations by a
 *    prediction that lies between list scheduling's bounds.  Two points are
 *    measured whatever their rank: the thread count measured fastest with
 *    one inter-op worker, and, where the parallelism proposes inter-op
 *    workers, the best point with more than one.
 *
 * 3. Measure the best in rounds.  The best few candidates (those whose
 *    predicted warm-up and samples fit the budget) run beside fathom's
 *    defaults and the vendors' settings (intra-op = physical cores,
 *    inter-op = sockets).
 *    - A round takes one sample of each candidate: steps enough for
 *      REPLAY_TUNE_SAMPLE_MS.
 *    - The points that run on the same threads run back to back.  Those
 *      groups, and the points within each, are shuffled every round.  So
 *      drift, and the after-effects of the point before, hit every
 *      candidate alike.
 *    - Untimed steps come before a sample (settling).  After other threads
 *      ran, REPLAY_TUNE_SETTLE_MS of them, where steps are shorter than
 *      REPLAY_TUNE_SETTLE_UNDER_MS.  After another point of the same
 *      threads, one step, where steps are shorter than a quarter of a
 *      sample.
 *    - A profiled point's first sample is its profiled steps, where those
 *      after the first last a sample, or the one step is as long.
 *    - Each point runs with its own threads alone.  The pool of inter-op
 *      workers is released before a point without them, since no idle
 *      OpenMP team may sit beside a measured one (exec_workers_release).
 *    - Candidates drop out (the race).  After the first round, a candidate
 *      whose fastest sample is slower than the leader's slowest by more
 *      than REPLAY_TUNE_FAR is out.  A candidate whose one sample is its
 *      profiled one, or that was predicted faster than the leader, takes a
 *      second sample first.  From the second round on, this check runs
 *      after each sample, and the candidates with only their profiled
 *      sample go first in the round.  From the second round the margin is
 *      REPLAY_TUNE_TIE.
 *    - The race ends when one candidate is left; or when those left are
 *      within REPLAY_TUNE_TIE of the leader (a tie); or after five rounds;
 *      or at the budget.
 *    It recommends the fastest by median time per sample.  A forced
 *    convolution algorithm within REPLAY_TUNE_CONV_TIE of a fastest auto
 *    point is preferred, because auto's per-shape choices are timed anew
 *    in every process.
 *
 * With `sweep` it measures every point of the knob space instead, with the
 * same samples (the exhaustive baseline of tests/bench/bench_tune).  With
 * `points`, it measures the points given (settings to compare, as `fathom
 * run`'s flags: replay_tune_point_parse) beside the defaults and the
 * vendors' settings, in the same rounds. */
#ifndef FATHOM_REPLAY_TUNE_H
#define FATHOM_REPLAY_TUNE_H
#include "exec/exec.h"
#include "replay/program.h"

#include <stdio.h>

typedef struct replay_tune_knobs {
    int threads;              /* intra-op threads in all (inter-op workers split them) */
    int inter;                /* inter-op workers */
    exec_conv_algo conv_algo; /* AUTO, IM2COL or DIRECT */
    exec_bind bind;           /* NONE, CLOSE or SPREAD */
    int batch;                /* the target's batch (a trace's is fixed) */
} replay_tune_knobs;

typedef struct replay_tune_target {
    void *ctx;
    char what[160];    /* "speech train (small)" */
    int batch;         /* the default batch */
    int batch_fixed;   /* 1: the batch cannot change (a trace) */
    int steps_per_run; /* recorded steps one step() runs (a trace's pass: all of them) */
    /* Makes an instance running with k whose runs name `hooks` in their
     * exec_settings (borrowed until close: the tuner switches them between
     * its profiling hooks and the process's); on error a status with
     * exec_errmsg(). */
    exec_status (*open)(void *ctx, const replay_tune_knobs *k, const exec_hooks *hooks, void **inst);
    /* Gives an open instance knobs k of its batch (any threads, algorithm,
     * binding and inter-op workers), its runs still naming `hooks` (NULL:
     * every point opens an instance of its own). */
    exec_status (*retune)(void *inst, const replay_tune_knobs *k, const exec_hooks *hooks);
    /* One step (or one pass of a trace); *ns its wall time. */
    exec_status (*step)(void *inst, uint64_t *ns);
    void (*close)(void *inst);
    /* The graph an open instance runs, whose arenas the ceilings' stream
     * reads (borrowed; NULL: the ceilings measure no bandwidth). */
    const exec_graph *(*graph)(void *inst);
} replay_tune_target;

#define REPLAY_TUNE_MAX_CANDIDATES 1024 /* a sweep of more points is an error */
#define REPLAY_TUNE_MAX_POINTS 16       /* points given to compare */
#define REPLAY_TUNE_MAX_LEVELS 16
#define REPLAY_TUNE_MAX_LINES 12
#define REPLAY_TUNE_SAMPLE_MS 10.0 /* a measured sample: steps enough to last this long */
#define REPLAY_TUNE_TIE 0.015      /* candidates this close to the leader's median are a tie */
#define REPLAY_TUNE_FAR 0.2        /* after one round, a candidate this much slower is out */
/* auto and a forced convolution algorithm this close are a tie, and the
 * forced one is picked (tune_pick).  auto times its per-shape choices anew
 * in each process, so its time in the tuner's process says little about
 * another's.  (deepq's small training: auto 10.68 ms and direct 10.88 in
 * the tuner, 1.9% apart, which picked auto; 12.99 and 11.23 in the sweep's
 * process; 10.33 and 10.32 in a duel's.) */
#define REPLAY_TUNE_CONV_TIE 0.03
#define REPLAY_TUNE_SETTLE_MS 5.0        /* untimed steps after other threads ran */
#define REPLAY_TUNE_SETTLE_UNDER_MS 25.0 /* ... where a step is shorter than this */

typedef struct replay_tune_opts {
    double budget_s;    /* wall-clock budget (> 0) */
    const int *batches; /* batches to try (NULL/0: the target's); not for a fixed batch */
    int nbatches;
    int sweep;  /* 1: every point of the knob space, `rounds` rounds, no budget */
    int rounds; /* rounds of a sweep or of given points (0: 5) */
    /* Measures these points instead (and the defaults and the vendors'
     * settings), `rounds` rounds, no race, no budget: an A/B of given
     * settings in alternating rounds. A knob left 0 (or *_DEFAULT) takes
     * the defaults' value. At most REPLAY_TUNE_MAX_POINTS; not with sweep. */
    const replay_tune_knobs *points;
    int npoints;
    FILE *progress; /* a terminal for "\r" progress lines, or NULL */
    /* this machine's ceilings, given (fathom peak's: sgemm GFLOP/s, triad
     * GB/s): the ridge without measuring it (0: measured where an op type
     * needs it) */
    double peak_gflops, peak_gbs;
} replay_tune_opts;

/* An op type's bound: below the ridge, at or above it, or not known (its
 * intensity between 1 and 64 FLOP/byte, where CPUs' ridges lie, and no
 * ceilings measured or given). */
enum { REPLAY_TUNE_BOUND_UNKNOWN, REPLAY_TUNE_BOUND_MEMORY, REPLAY_TUNE_BOUND_COMPUTE };
/* "memory-bound", "compute-bound", "bound unknown" */
const char *replay_tune_bound_name(int bound);
/* "memory", "compute", "unknown" (the JSON's) */
const char *replay_tune_bound_key(int bound);

typedef struct replay_tune_cand {
    replay_tune_knobs k;
    const char *role;      /* "defaults", "vendors", "candidate" (several may share one point) */
    double predicted_ns;   /* per step, from the measurements (0: not predicted) */
    double median_ns;      /* measured, per step */
    double min_ns, max_ns; /* the fastest and slowest sample, per step */
    double per_sample_ns;  /* median_ns / batch */
    int rounds;            /* measured samples */
    int steps;             /* measured steps, all samples */
    int profiled;          /* its first sample the profile's steps at its point (tune_rounds) */
} replay_tune_cand;

typedef struct replay_tune_result {
    int cores, physical, sockets;
    /* measurements */
    double parallelism, op_ns, critical_ns; /* of the data flow at flow_threads (one where profiled), per step */
    int flow_threads;
    int nlevels;
    int level_threads[REPLAY_TUNE_MAX_LEVELS];
    double level_op_ns[REPLAY_TUNE_MAX_LEVELS]; /* op time per step at each thread level */
    int level_steps[REPLAY_TUNE_MAX_LEVELS];    /* its profiled steps (as many as last a sample) */
    double conv_share;                          /* convolution class's share of op time */
    double ridge, peak_gflops, peak_gbs;        /* this machine's, measured or given (0: not needed) */
    double stream_mb;                           /* the measured read stream's bytes, MiB (0: not measured) */
    int ceilings_given;                         /* 1: the opts' peak_* */
    double preempt_per_s;                       /* involuntary context switches a second, profiling */
    char binds[3];                              /* the bindings offered (exec_bind; 0 ends) */
    int nbinds;
    int ntop;
    struct {
        char op[48];
        double share, intensity;
        int bound; /* REPLAY_TUNE_BOUND_* */
        double speedup;
    } top[4];
    /* reasons, one line each */
    char lines[REPLAY_TUNE_MAX_LINES][320];
    int nlines;
    /* measured candidates */
    replay_tune_cand c[REPLAY_TUNE_MAX_CANDIDATES];
    int n, best, defaults, vendors;
    int rounds;
    double wall_s, measure_s; /* all of it; the alternating runs */
    /* where the time went: profiling (with its warm-ups), the ceilings,
     * starting and warming the other candidates, the alternating runs */
    double profile_s, ceilings_s, start_s;
    double settle_ms;       /* untimed steps before a sample after other threads ran (0: none, long steps) */
    double budget_s;        /* asked for (0: a sweep or given points) */
    const char *mode;       /* "tune", "sweep" or "compare" (given points) */
    double default_step_ns; /* a step at the defaults, profiled */
    /* owned: candidate i's samples, ns per recorded step, in the order of
     * the rounds, at samples[i * REPLAY_TUNE_SAMPLES_MAX] (c[i].rounds of
     * them; NULL where no round ran); replay_tune_result_release frees it */
    double *samples;
} replay_tune_result;

#define REPLAY_TUNE_SAMPLES_MAX 64 /* samples kept a candidate */

/* Fills r (all of it: a result of an earlier call must be released
 * first). */
exec_status replay_tune(const replay_tune_target *t, const replay_tune_opts *o, replay_tune_result *r);
/* Frees what r owns (its samples); r stays readable but for them. */
void replay_tune_result_release(replay_tune_result *r);
/* r's ceilings in words, into buf (n bytes): "sgemm 232.5 GFLOP/s, a read
 * stream 59.6 GB/s over the workload's 16 MiB", or "..., triad 33.7 GB/s,
 * given (fathom peak)"; NULL (buf untouched) where there are none: the
 * proposals' lines and the text report say it alike. */
const char *replay_tune_ceilings_text(const replay_tune_result *r, char *buf, size_t n);

/* `--threads T --inter M --conv-algo A --bind B [--batch B]`: flags of `fathom run`. */
void replay_tune_flags(const replay_tune_knobs *k, int with_batch, char *buf, size_t len);

/* The reverse, for a point to compare: "--threads 1 --bind close" (any of
 * the five flags, "--flag value" or "--flag=value"; a later one wins) into
 * *k, the knobs not named left 0 (the defaults'). EXEC_ERR_ARG on an
 * unknown flag, a missing or bad value, or no flag at all. */
exec_status replay_tune_point_parse(const char *flags, replay_tune_knobs *k);

/* A target that replays a program rebuilt from a trace (built, with data
 * flow); p is borrowed. Fails when the program has no data flow. */
exec_status replay_tune_trace_target(replay_program *p, replay_tune_target *t);
#endif
