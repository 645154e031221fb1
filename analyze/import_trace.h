/* import_trace.h -- the in-memory trace `fathom import` builds from a
 * foreign trace before emitting it as schema-2 messages (internal to
 * import_pytorch.c and import_source.c).
 *
 * Records are compact (24 bytes a span): the importer keeps the spans of
 * the whole input (it must sort each thread's spans to find the outermost
 * op of each nest), never the JSON itself; past a window they live in a
 * temporary file (import_spill.h), so its memory does not grow with them. */
#ifndef FATHOM_ANALYZE_IMPORT_TRACE_H
#define FATHOM_ANALYZE_IMPORT_TRACE_H

#include "analyze/import.h"
#include "analyze/import_spill.h"

#include <stdint.h>

/* the dtype labels of imported tensors: the engine's two first, in its
 * order (float32, int32), then the framework's others */
enum {
    IMP_F32,
    IMP_I32,
    IMP_F64,
    IMP_F16,
    IMP_BF16,
    IMP_I64,
    IMP_I16,
    IMP_I8,
    IMP_U8,
    IMP_BOOL,
    IMP_DTYPE_OTHER,
    IMP_DTYPE_COUNT
};
extern const char *const analyze_import_dtype_names[IMP_DTYPE_COUNT];
enum { IMP_FORWARD, IMP_BACKWARD, IMP_UPDATE, IMP_PHASE_COUNT };
extern const char *const analyze_import_phase_names[IMP_PHASE_COUNT];
enum {
    IMP_ROLE_INPUT,
    IMP_ROLE_WEIGHT,
    IMP_ROLE_ACTIVATION,
    IMP_ROLE_GRADIENT,
    IMP_ROLE_OPTIMIZER,
    IMP_ROLE_WORKSPACE,
    IMP_ROLE_COUNT
};
extern const char *const analyze_import_role_names[IMP_ROLE_COUNT];

typedef struct imp_strtab imp_strtab; /* interned strings -> dense ids */

typedef struct imp_proto { /* an op call site: name, argument shapes and types */
    uint32_t name;         /* in t->names */
    uint8_t cls;           /* analyze_import_class */
    uint32_t nin, nout;
    uint32_t *in, *out; /* tensor ids */
    uint64_t flops, bytes;
    uint8_t nattrs; /* attrs in the engine op's layout */
    int64_t attrs[ANALYZE_IMPORT_MAX_ATTRS];
} imp_proto;

typedef struct imp_node { /* a node_def: a proto in a phase */
    uint32_t proto;
    uint8_t phase, cls;
} imp_node;

typedef struct imp_tensor {
    uint8_t dtype, role, ndim;
    uint32_t shape[ANALYZE_IMPORT_MAX_DIMS];
    uint64_t bytes;
} imp_tensor;

typedef struct imp_track { /* a CPU thread or a GPU stream */
    int64_t vpid, vtid;
    int gpu;
    char *procname;
} imp_track;

/* span kinds: an op, a GPU kernel, a backward or optimizer context span, an
 * op nested in another (a part of it), an op kept as a node record */
enum { IMP_REC_OP, IMP_REC_KERNEL, IMP_REC_BWD, IMP_REC_UPD, IMP_REC_INNER, IMP_REC_KEPT };
typedef struct imp_rec { /* a span of the input: 24 bytes */
    uint64_t b, e;       /* ns */
    uint32_t track : 28; /* at most IMP_MAX_TRACKS */
    uint32_t kind : 4;
    uint32_t ref; /* proto (while reading), then node */
} imp_rec;
#define IMP_MAX_TRACKS (UINT32_C(1) << 28)

typedef struct imp_step {
    uint64_t b, e;
    uint32_t num;
} imp_step;

/* A GPU trace's link between a CPU op and the kernels it launched: Kineto
 * gives both the same "External id", and the runtime call that launched a
 * kernel (cudaLaunchKernel, cudaGraphLaunch, hipLaunchKernel...) and the
 * kernel the same "correlation". */
typedef struct imp_launch {
    int64_t ext, corr;
    uint64_t b;
    uint32_t track, proto;
    uint8_t has_ext, has_corr;
} imp_launch;

/* A GPU trace's runtime call on a host thread (cuda_runtime, cuda_driver,
 * hip...; fathom-trace(5), runtime): its class (tracer/decode.h's
 * tracer_call_kind values), span, track and correlation. */
typedef struct imp_call {
    uint64_t b, e;
    int64_t corr;
    uint32_t track;
    uint8_t kind, has_corr;
} imp_call;

/* The device time of a kept record's kernels (imp_kernel_times). */
typedef struct imp_device_time {
    uint64_t ns;  /* summed kernel time; 0: none */
    uint64_t b;   /* the first kernel's begin */
    uint64_t top; /* the longest kernel's time */
    uint32_t kernels;
    int cls; /* the longest kernel's class (a proto's cls) */
} imp_device_time;

typedef struct imp_trace {
    char *path;
    analyze_import_summary sum;
    imp_strtab *names, *protokeys, *nodekeys, *trackkeys, *tensorkeys;
    imp_proto *protos;
    size_t nprotos, cprotos;
    imp_node *nodes;
    size_t nnodes, cnodes;
    imp_tensor *tensors;
    size_t ntensors, ctensors;
    imp_track *tracks;
    size_t ntracks, ctracks;
    imp_rec *recs; /* recspill's array: in input order while reading, then the kept ones by track, begin */
    size_t nrecs;
    imp_spill recspill;
    imp_spill_io recw; /* while reading: the records' writer */
    size_t *track_at;  /* after resolve: track k's records are recs[track_at[k]..track_at[k+1]) */
    imp_step *steps;
    size_t nsteps, csteps;
    imp_launch *cpu_ext;
    size_t ncpu_ext; /* CPU ops with an External id (GPU traces only) */
    imp_launch *kern_ext;
    size_t nkern_ext; /* kernels with an External id or a correlation */
    imp_launch *rt;
    size_t nrt;       /* runtime calls with a correlation */
    uint32_t *launch; /* per record once read: its launch number (fathom-trace(5)), or NULL: none */
    imp_spill cpu_spill, kern_spill, rt_spill, launch_spill; /* the arrays above */
    uint64_t unlaunched;                                     /* device records no host op launched */
    uint64_t unlaunched_ns;

    imp_call *calls; /* the runtime calls: by track, then begin, once read (numbered from 1 in that order) */
    size_t ncalls;
    uint32_t *call;                    /* per kept record: its runtime call's number, or NULL: no calls */
    imp_spill calls_spill, call_spill; /* the two arrays above */

    uint64_t t0, t1; /* first begin, last end */
    size_t main_track;
    int64_t last_track, last_pid, last_tid; /* the track of the last event read */
    int last_gpu;
    int hip_runtime;       /* HIP runtime calls seen (ROCm) */
    const char *last_cat;  /* the last known category seen */
    uint64_t unknown_cats; /* events of unknown categories */
    char first_unknown_cat[64];
    /* warnings, counted while reading, printed once each */
    uint64_t bad_time, bad_shape, not_x, overlap, bad_step, no_name, untimed, big_ints;
    char notes[1024];    /* lines the execution trace parser adds (import_et.c) */
    const char *profile; /* an execution trace's profiler trace to link (borrowed), or NULL */
    char *key;           /* the fast path's key buffer (import_scan.h) */
    size_t ckey;
} imp_trace;

/* Read one file (either format) into a new trace; NULL and a one-line
 * message in base_errmsg() on failure.  model: the run's model name (NULL: from the
 * file name). */
imp_trace *imp_trace_read(const char *path, const char *model);
/* The same, an execution trace linked with the profiler trace of the same
 * run at path profile (NULL: none): its ops take the measured times. */
imp_trace *imp_trace_read_linked(const char *path, const char *model, const char *profile);
/* Per kept record of a read profiler trace: the device time of the kernels
 * that its outermost op launched (the launch link: the runtime call of a
 * kernel's correlation id inside the op, as Chakra's trace_link finds it,
 * else the op of its External id), into d[t->nrecs] (zeroed first). 0, or
 * -1 when out of memory. */
int imp_kernel_times(const imp_trace *t, imp_device_time *d);
void imp_trace_destroy(imp_trace *t);
/* Whether profiler events go through the scanner (import_scan.h) before
 * jansson (1, the default) or through jansson alone (0: tests compare the
 * two readings). */
void imp_trace_fast_path(int on);
/* The segment of a kept op beginning at b: 2k+1 in step k, 2k between
 * steps k-1 and k (the steps of a read trace: sorted, disjoint). */
uint32_t imp_seg_of(const imp_trace *t, uint64_t b);
/* The interned string of id. */
const char *imp_str(const imp_strtab *s, uint32_t id);
uint32_t imp_strcount(const imp_strtab *s);
/* One warning per line into buf (NUL-terminated); the number of lines. */
int imp_trace_warnings(const imp_trace *t, char *buf, size_t len);

#endif
