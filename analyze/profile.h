/* profile.h -- the profile model of one trace: what the analyses read.
 *
 * Built by feeding it the trace's events in time order (analyze/sink.c does
 * that from Babeltrace2 messages); it knows nothing of Babeltrace2 or of the
 * engine, only the trace schema (docs/design.md, "The trace").  Memory grows with the
 * number of op types, tensors alive and ops in flight, never with the number
 * of events: per-step statistics are folded into the totals as soon as a
 * step can no longer be one of the last `skip_last` steps.
 *
 * Which ops count: the ops that begin inside a kept step (steps are counted
 * in trace order; the first `skip_first` and the last `skip_last` are
 * dropped).  A trace without any step event counts every op.
 */
#ifndef FATHOM_ANALYZE_PROFILE_H
#define FATHOM_ANALYZE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

typedef enum analyze_phase {
    ANALYZE_PHASE_FORWARD,
    ANALYZE_PHASE_BACKWARD,
    ANALYZE_PHASE_UPDATE,
    ANALYZE_PHASE_OTHER, /* a label this analyzer does not know */
    ANALYZE_NPHASE
} analyze_phase;

const char *analyze_phase_name(analyze_phase p);
analyze_phase analyze_phase_parse(const char *label);

/* Statistics of a set of op invocations. min_ns is UINT64_MAX when count == 0. */
typedef struct analyze_stat {
    uint64_t count, ns, min_ns, max_ns;
    uint64_t flops, bytes; /* sums of op_end's flops and bytes */
} analyze_stat;

void analyze_stat_init(analyze_stat *s);
void analyze_stat_add(analyze_stat *s, uint64_t ns, uint64_t flops, uint64_t bytes);
void analyze_stat_merge(analyze_stat *into, const analyze_stat *from);
double analyze_stat_mean(const analyze_stat *s);

typedef struct analyze_optype {
    char *name;                         /* the op enum label (or "op#N" when the value had no label) */
    int cls;                            /* index into the profile's classes */
    analyze_stat phase[ANALYZE_NPHASE]; /* kept ops, by phase */
    analyze_stat all;                   /* kept ops, all phases (finish) */
} analyze_optype;

typedef struct analyze_meta {
    int have_begin, have_end;
    uint32_t schema;
    char *model, *mode, *preset, *version, *blas, *cpu; /* NULL when absent */
    uint32_t batch, steps, threads, inter;
    uint64_t seed;
    int32_t status; /* run_end */
    uint64_t ops;   /* run_end: op invocations executed */
    char *skipped;  /* the source's CTF traces set aside as not fathom's, "PATH (why); ..." (NULL: none) */
} analyze_meta;

/* What went wrong while reading: every non-zero count is a warning. */
typedef struct analyze_diag {
    uint64_t events;            /* all events seen */
    uint64_t foreign_events;    /* events of other providers (ignored) */
    uint64_t unknown_events;    /* fathom:* events this schema does not define */
    uint64_t malformed_events;  /* fathom events missing a field */
    uint64_t discarded_events;  /* lost by the tracer (discarded-events messages) */
    uint64_t discarded_packets; /* lost by the tracer (discarded-packets messages) */
    uint64_t discarded_unknown; /* discarded-events messages without a count */
    uint64_t unmatched_begin;   /* op_begin without op_end */
    uint64_t unmatched_end;     /* op_end without op_begin */
    uint64_t duplicate_begin;   /* op_begin whose (vtid, seq) was already pending */
    uint64_t negative_time;     /* op records ending before they begin */
    uint64_t undefined_nodes;   /* schema 2: op records naming a node no node_def describes */
    uint64_t redefined_nodes;   /* schema 2: node_defs redescribing a node differently */
    uint64_t unmatched_steps;   /* step_begin without step_end or the reverse */
    uint64_t unknown_frees;     /* tensor_free of a tensor never allocated */
    uint64_t run_begins;        /* more than one run_begin is suspicious */
} analyze_diag;

/* Memory over one completed step (bytes of live tensors, all roles). */
typedef struct analyze_mem_step {
    uint64_t start, peak, end; /* at step_begin, the most within it, at step_end */
} analyze_mem_step;

#define ANALYZE_MEM_STEPS_MAX 4096 /* steps whose memory is kept (later ones: counted only) */

/* One completed step's span in the trace's clock (ordinal: the steps begun
 * before it), in trace order. */
typedef struct analyze_step_span {
    uint64_t ordinal, begin, end;
} analyze_step_span;

typedef struct analyze_profile {
    char *source; /* what was read (path, URL or trace name) */
    analyze_meta meta;
    uint32_t skip_first, skip_last;

    size_t nops;
    analyze_optype *ops; /* op types in first-seen order */
    size_t nclasses;
    char **classes; /* class labels in first-seen order */
    size_t nroles;
    char **roles; /* tensor role labels in first-seen order */

    /* steps */
    uint64_t steps_seen;  /* completed steps in the trace */
    analyze_stat step;    /* durations of the kept steps */
    analyze_stat outside; /* ops that began outside any step (init, ...) */
    uint64_t ops_seen;    /* op records anywhere */

    /* data flow, when the profile was asked to follow it
     * (analyze_profile_follow_flow; the parallelism analysis): each kept
     * step's critical path (tracer/critpath.h), summed; a trace without
     * steps counts as one step */
    int flow_seen;                       /* some op named the tensors it reads or writes */
    uint64_t flow_steps;                 /* kept steps with op records */
    double flow_op_ns, flow_critical_ns; /* sums over those steps */
    double flow_ops, flow_critical_ops;  /* op invocations, all and on the critical path */
    double flow_min, flow_max;           /* the lowest and highest parallelism of one step */
    int flow_nomem;                      /* the data flow of a trace without steps ran out of memory */

    /* memory (tensor_alloc / tensor_free over the whole run, whatever steps
     * are skipped) */
    uint64_t *role_peak, *role_live; /* per role, bytes */
    uint64_t *role_at_peak;          /* per role, bytes live when peak_bytes was first reached */
    uint64_t *role_tensors;          /* per role, tensors allocated */
    uint64_t peak_bytes, live_bytes; /* all roles together */
    uint64_t peak_step;              /* where the peak was first reached: inside step peak_step
                                        (counted from 0 in trace order) when peak_in_step, else
                                        before it began (== steps begun: after the last step) */
    int peak_in_step;
    uint64_t tensors, tensors_live;
    size_t nmem_steps;           /* completed steps with their memory, in trace order */
    analyze_mem_step *mem_steps; /* at most ANALYZE_MEM_STEPS_MAX */
    uint64_t mem_steps_dropped;  /* completed steps past that bound */

    /* a GPU trace's device activity (device.h), never in the op times
     * above; NULL when the trace has none */
    struct analyze_devices *devices;

    /* the completed steps' spans (at most ANALYZE_MEM_STEPS_MAX, then
     * counted in step_spans_dropped), and the time the op records cover:
     * the first one's begin, the last one's end (first_ns > last_ns: none) */
    size_t nstep_spans;
    analyze_step_span *step_spans;
    uint64_t step_spans_dropped;
    uint64_t first_ns, last_ns;

    /* one rank of a distributed job: an imported trace's MANIFEST
     * (source.rank, source.world_size); -1 when it does not say */
    int64_t rank, world_size;

    /* a live viewer that joined late (tracer/decode.h's run_state): the
     * steps and op totals before the join came from the recorder's
     * statedump; joined_step: the steps done then (--skip-first applies
     * to the steps seen after it only) */
    int joined;
    uint64_t joined_step;

    analyze_diag diag;
    int finished;
    void *priv; /* in-flight state (freed by finish) */
} analyze_profile;

/* NULL on out of memory. */
analyze_profile *analyze_profile_create(const char *source, uint32_t skip_first, uint32_t skip_last);
void analyze_profile_destroy(analyze_profile *p);

/* The feeding API.  Functions returning int give 0, or -1 on out of memory.
 * `op` / `role` are indices from the intern functions. */
int analyze_profile_intern_op(analyze_profile *p, const char *name, const char *cls);
int analyze_profile_intern_role(analyze_profile *p, const char *name);
/* Copies the strings of m; have_begin is set. */
int analyze_profile_run_begin(analyze_profile *p, const analyze_meta *m);
void analyze_profile_run_end(analyze_profile *p, int32_t status, uint64_t ops);
int analyze_profile_step_begin(analyze_profile *p, uint64_t ts, uint32_t step);
int analyze_profile_step_end(analyze_profile *p, uint64_t ts, uint32_t step);
/* One op record (tracer/decode.h), fed when it ends or later: counted in
 * the step it began in (the one in progress or one of the last 8 ended),
 * or outside steps; an end before its begin counts 0 ns. */
/* Follow the data flow from now on: analyze_profile_flow_op() records. */
int analyze_profile_follow_flow(analyze_profile *p);
/* One op's record for the data flow (in, out: the tensor ids it reads and
 * writes); 0 when the profile does not follow it, -1 out of memory. */
int analyze_profile_flow_op(analyze_profile *p, uint64_t begin, uint64_t end, const uint32_t *in, uint32_t nin,
                            const uint32_t *out, uint32_t nout);
int analyze_profile_op(analyze_profile *p, uint64_t begin, uint64_t end, int op, analyze_phase phase, uint64_t flops,
                       uint64_t bytes);
int analyze_profile_tensor_alloc(analyze_profile *p, uint32_t id, int role, uint64_t bytes);
/* A late viewer's start (a fresh profile after run_begin): `steps` are the
 * durations of the steps done so far (kept), outside_ops the op
 * invocations outside steps (not kept). */
int analyze_profile_joined(analyze_profile *p, const analyze_stat *steps, uint64_t outside_ops);
/* The kept invocations of one op type and phase before the join (a
 * graph_totals' node), added whole. */
int analyze_profile_totals(analyze_profile *p, int op, analyze_phase phase, const analyze_stat *st);
void analyze_profile_tensor_free(analyze_profile *p, uint32_t id);

/* Ends the trace: ops still pending become unmatched_begin, an open step is
 * dropped, the last skip_last steps are dropped, per-op totals are
 * computed.  Idempotent. */
void analyze_profile_finish(analyze_profile *p);

/* A finished copy of a profile still being fed (a live trace's table so
 * far): the trace as if it ended now.  NULL on out of memory. */
analyze_profile *analyze_profile_snapshot(const analyze_profile *p);

/* ---- derived views (after finish) --------------------------------------- */
/* Time of all kept ops; the denominator of every share. */
uint64_t analyze_profile_total_ns(const analyze_profile *p);
/* Kept steps (0 when the trace has no steps). */
uint64_t analyze_profile_steps_kept(const analyze_profile *p);
/* The spans of the kept steps among those step_spans holds: their number,
 * the first in *v (the steps --skip-first and --skip-last leave). */
size_t analyze_profile_kept_spans(const analyze_profile *p, const analyze_step_span **v);
/* Per class / per phase totals of the kept ops (arrays of nclasses /
 * ANALYZE_NPHASE stats that the caller provides). */
void analyze_profile_class_stats(const analyze_profile *p, analyze_stat *out);
void analyze_profile_phase_stats(const analyze_profile *p, analyze_stat *out);
/* Op type indices sorted by descending time (ties: by name); out has nops. */
void analyze_profile_ops_by_time(const analyze_profile *p, size_t *out);
/* Model label: meta.model, else "?" */
const char *analyze_profile_model(const analyze_profile *p);
const char *analyze_profile_mode(const analyze_profile *p);

/* Writes one line per problem into buf ("12 events discarded by the
 * tracer; ..."); returns the number of warnings. */
int analyze_profile_warnings(const analyze_profile *p, char *buf, size_t len);

/* The share of time that makes "most" of it in the cumulative view. */
#define ANALYZE_CUMULATIVE_SHARE 0.9

/* How many op types (largest first: ord from analyze_profile_ops_by_time)
 * make `share` of p's op time. */
size_t analyze_ops_for_share(const analyze_profile *p, const size_t *ord, double share);
/* p's classes by descending time: the indices (caller frees), with each
 * class's stats written into cs (room for p->nclasses); NULL on out of memory. */
size_t *analyze_profile_classes_by_time(const analyze_profile *p, analyze_stat *cs);
/* Mean kept step time, or 0 when the trace has no steps. */
double analyze_step_ns(const analyze_profile *p);
/* 1 when both names are given (not NULL nor "") and differ. */
int analyze_profile_named_differently(const char *x, const char *y);

#endif
