/* exec.h -- fathom's execution engine: tensors, the op table, static graphs,
 * symbolic autodiff, optimizers and the executor.
 *
 * A short tour (see tests/test_graph.c for the whole thing):
 *
 *     exec_graph *g = NULL;
 *     exec_graph_create(&g, seed);
 *     uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){B, 784});
 *     uint32_t y = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){B});
 *     uint32_t w = exec_weight(g, "w", 2, (int64_t[]){784, 10}, EXEC_INIT_GLOROT);
 *     uint32_t b = exec_weight(g, "b", 1, (int64_t[]){10}, EXEC_INIT_ZERO);
 *     uint32_t logits = ex_bias_add(g, ex_matmul(g, x, w, 0, 0), b, 1);
 *     uint32_t loss = ex_sparse_softmax_xent(g, logits, y);
 *     exec_gradients(g, loss);              // appends the backward graph
 *     exec_optimizer_sgd(g, 0.1f);          // appends the update nodes
 *     if (exec_graph_status(g) || exec_graph_plan(g)) ... error ...
 *     fill exec_data(g, x), exec_data(g, y); exec_graph_run(g, &opts);
 *     float l = exec_dataf(g, loss)[0];
 *
 * Builders (ex_* in build.h) append nodes and return the id of their output
 * tensor, inferring its shape. A builder that fails returns 0 and records the
 * first error in the graph (sticky, as cairo does): check exec_graph_status()
 * once after building. Tensor ids start at 1; 0 means "none".
 *
 * Every node runs through exec_dispatch() (executor.c): the single place
 * where the tracer hooks in. Library code returns exec_status and never exits.
 */
#ifndef FATHOM_EXEC_H
#define FATHOM_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXEC_MAX_DIMS 5
#define EXEC_MAX_ATTRS 16

/* ---- status ------------------------------------------------------------ */
typedef enum exec_status {
    EXEC_OK = 0,
    EXEC_ERR_NOMEM,       /* an allocation failed */
    EXEC_ERR_SHAPE,       /* incompatible shapes or bad attributes */
    EXEC_ERR_ARG,         /* bad argument */
    EXEC_ERR_STATE,       /* call out of order (e.g. run before plan) */
    EXEC_ERR_NUMERIC,     /* a NaN or a domain error */
    EXEC_ERR_IO,          /* a file could not be read or written */
    EXEC_ERR_INTERRUPTED, /* stopped at an op boundary by exec_interrupt() */
} exec_status;

const char *exec_status_str(exec_status s);

/* The convention of every library (base/error.h): a status and the
 * calling thread's one-line message ("MatMul: inner dims 3 != 4").
 * exec_errmsg() is base_errmsg(). */
const char *exec_errmsg(void);
/* Sets the thread's message (base_fail); returns s so callers can `return exec_fail(...)`. */
exec_status exec_fail(exec_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the tables --------------------------------------------------------- */
typedef enum exec_op {
#define X(name, cls, nin, nout, cost, grad, attrs, words) EXEC_OP_##name,
#include "ops.def"
#undef X
    EXEC_OP_COUNT
} exec_op;

typedef enum exec_class {
#define X(name, desc) EXEC_CLASS_##name,
#include "op_class.def"
#undef X
    EXEC_CLASS_COUNT
} exec_class;

typedef enum exec_role {
#define X(name) EXEC_ROLE_##name,
#include "role.def"
#undef X
    EXEC_ROLE_COUNT
} exec_role;

typedef enum exec_phase { EXEC_PHASE_forward, EXEC_PHASE_backward, EXEC_PHASE_update, EXEC_PHASE_COUNT } exec_phase;
typedef enum exec_dtype { EXEC_F32, EXEC_I32, EXEC_DTYPE_COUNT } exec_dtype;
/* What a run computes: training runs every phase, inference the forward one.
 * The workloads' modes and the trace schema's mode labels are this table. */
typedef enum exec_mode { EXEC_MODE_train, EXEC_MODE_infer, EXEC_MODE_COUNT } exec_mode;

const char *exec_op_name(exec_op op);
const char *exec_class_name(exec_class c);
const char *exec_role_name(exec_role r);
const char *exec_phase_name(exec_phase p);
const char *exec_dtype_name(exec_dtype t);
const char *exec_mode_name(exec_mode m);
/* Name -> value; -1 if unknown. */
int exec_op_from_name(const char *name);

/* ---- tensors ------------------------------------------------------------ */
typedef struct exec_tensor {
    uint32_t id;
    exec_role role;
    exec_dtype dtype;
    int ndim;
    int64_t shape[EXEC_MAX_DIMS];
    int64_t strides[EXEC_MAX_DIMS]; /* in elements, row-major */
    int64_t numel;
    size_t bytes;
    void *data; /* borrowed from the role's arena, NULL before plan */
    char name[48];
    /* A stamp of the data's contents, unique in the process: set at plan and
     * by every exec_tensor_get / exec_data* call (the caller may write);
     * kernels key what they derive from a tensor (a transformed filter) on
     * it. Write data only through a pointer got after the graph's last run. */
    uint64_t version;
    /* Set at plan: the tensor whose buffer this one uses -- its own id, or
     * that of an input its node writes over (buffer forwarding,
     * exec/forwarding.c: an intermediate whose last reader is an
     * elementwise op of its size, such as Relu, Add or an inference
     * FusedBatchNorm, holds that op's output after a run). Such a tensor
     * adds no bytes to the arena. */
    uint32_t storage;
    bool kept; /* exec_tensor_keep: never written over */
} exec_tensor;

typedef struct exec_node {
    uint32_t id;
    exec_op op;
    exec_phase phase;
    int nin, nout, nattrs;
    uint32_t *in;  /* tensor ids */
    uint32_t *out; /* tensor ids (an update op lists the variables it writes in place) */
    int64_t attrs[EXEC_MAX_ATTRS];
} exec_node;

static inline int64_t exec_attr_f(float f)
{
    union {
        float f;
        uint32_t u;
    } v = { .f = f };
    return (int64_t)v.u;
}
static inline float exec_attr_getf(int64_t a)
{
    union {
        float f;
        uint32_t u;
    } v = { .u = (uint32_t)a };
    return v.f;
}

/* ---- graphs ------------------------------------------------------------- */
typedef struct exec_graph exec_graph;

typedef enum exec_init {
    EXEC_INIT_ZERO,
    EXEC_INIT_ONE,
    EXEC_INIT_GLOROT,
    EXEC_INIT_HE,
    EXEC_INIT_NORMAL,
    EXEC_INIT_UNIFORM
} exec_init;

exec_status exec_graph_create(exec_graph **out, uint64_t seed);
void exec_graph_destroy(exec_graph *g);
exec_status exec_graph_status(const exec_graph *g);

uint32_t exec_input(exec_graph *g, const char *name, exec_dtype dt, int ndim, const int64_t *shape);
/* A trainable weight; `scale` is the std-dev (NORMAL) or half-range (UNIFORM). */
uint32_t exec_weight(exec_graph *g, const char *name, int ndim, const int64_t *shape, exec_init init);
uint32_t exec_weight_scaled(exec_graph *g, const char *name, int ndim, const int64_t *shape, exec_init init,
                            float scale);
/* A constant tensor (role input) with every element set to `value`. */
uint32_t exec_const(exec_graph *g, const char *name, int ndim, const int64_t *shape, float value);
/* A tensor of any role; used by builders and optimizers. */
uint32_t exec_tensor_new(exec_graph *g, exec_role role, exec_dtype dt, int ndim, const int64_t *shape,
                         const char *name);

/* Appends a node: op on inputs with attributes; output shapes come from the
 * op's shape function. Writes nout output ids (nout = the op's NOUT, or nin
 * for variadic outputs, or attrs[1] for NOUT -2 such as Split's num_split)
 * to `out` when non-NULL; returns the first output id
 * (0 on error, recorded in the graph). */
uint32_t exec_op_add(exec_graph *g, exec_op op, int nin, const uint32_t *in, int nattrs, const int64_t *attrs,
                     uint32_t *out);
/* Appends an in-place node that writes `nout` existing tensors (updates). */
uint32_t exec_op_add_inplace(exec_graph *g, exec_op op, int nin, const uint32_t *in, int nattrs, const int64_t *attrs,
                             int nout, const uint32_t *out);

/* Appends a node whose outputs already exist (replay: a program rebuilt from
 * a trace). The op's shape function must agree with the outputs' shapes and
 * dtypes, except for in-place updates (outputs that are also inputs). */
exec_status exec_op_add_recorded(exec_graph *g, exec_op op, exec_phase phase, int nin, const uint32_t *in, int nattrs,
                                 const int64_t *attrs, int nout, const uint32_t *out);

/* Nodes added from now on get this phase (builders default to forward). */
void exec_set_phase(exec_graph *g, exec_phase p);

/* exec_tensor_get and exec_data* give writable access: each call marks
 * the tensor changed (a new version), so get them again after a run before
 * writing, never keep a pointer across runs for writing. */
exec_tensor *exec_tensor_get(const exec_graph *g, uint32_t id);
uint32_t exec_tensor_count(const exec_graph *g); /* ids are 1..count */
const exec_node *exec_node_get(const exec_graph *g, uint32_t i);
uint32_t exec_node_count(const exec_graph *g);
void *exec_data(const exec_graph *g, uint32_t id);
float *exec_dataf(const exec_graph *g, uint32_t id);
int32_t *exec_datai(const exec_graph *g, uint32_t id);

/* Before plan: the caller reads this intermediate tensor after runs, so no
 * node may write its output over it (buffer forwarding, see
 * exec_tensor.storage). Results no node reads need no keeping. */
exec_status exec_tensor_keep(exec_graph *g, uint32_t id);

/* Trainable weights, in creation order. */
uint32_t exec_weight_count(const exec_graph *g);
uint32_t exec_weight_id(const exec_graph *g, uint32_t i);
/* Total number of trainable parameters. */
int64_t exec_param_count(const exec_graph *g);

/* ---- autodiff and optimizers (autodiff.c, optim.c) ---------------------- */
/* Appends the backward graph of scalar `loss`; afterwards exec_grad_of(w)
 * names the gradient of each weight (0 if the loss does not depend on it). */
exec_status exec_gradients(exec_graph *g, uint32_t loss);
uint32_t exec_grad_of(const exec_graph *g, uint32_t tensor);
/* Replaces the gradient of every weight (e.g. after clipping or noise). */
void exec_grad_set(exec_graph *g, uint32_t tensor, uint32_t grad);

/* The optimizers (exec/optim.c; their update ops: exec/ops/optimization.c). */
exec_status exec_optimizer_sgd(exec_graph *g, float lr);
exec_status exec_optimizer_momentum(exec_graph *g, float lr, float momentum);
exec_status exec_optimizer_adam(exec_graph *g, float lr, float beta1, float beta2, float epsilon);
exec_status exec_optimizer_rmsprop(exec_graph *g, float lr, float decay, float momentum, float epsilon);
/* Sets the learning rate of every update node the optimizers above appended,
 * for a schedule (the Transformer's warm-up): call between runs. */
exec_status exec_optimizer_set_lr(exec_graph *g, float lr);
/* Gradient transforms, applied to exec_grad_of() of every weight before the
 * optimizer: TF's clip_by_global_norm and per-tensor clip_by_norm. */
exec_status exec_clip_global_norm(exec_graph *g, float clip_norm);
exec_status exec_clip_by_norm(exec_graph *g, float clip_norm);

/* ---- planning and running (plan.c, executor.c) ----------------------- */
typedef struct exec_mem_stats {
    size_t bytes[EXEC_ROLE_COUNT]; /* sum of the tensors' bytes, per role */
    size_t arena[EXEC_ROLE_COUNT]; /* what each arena allocated (with alignment) */
    size_t peak_workspace;
} exec_mem_stats;

/* Allocates every tensor in its role's arena and initializes weights.
 * Arenas larger together than exec_memory_limit() are an EXEC_ERR_NOMEM
 * before any is allocated: within a cgroup's memory limit, or past the
 * machine's memory in arenas each smaller than it, the allocations succeed
 * and touching them gets the process killed. */
exec_status exec_graph_plan(exec_graph *g);
/* Whether exec_graph_plan lays intermediates out by their lifetimes
 * (exec/lifetimes.c): a tensor written before any node reads it, not kept
 * or initialized, takes the buffer of one whose last user ran before its
 * writer, in node order. Off by default; before exec_graph_plan. */
void exec_graph_set_reuse(exec_graph *g, bool on);
void exec_graph_mem(const exec_graph *g, exec_mem_stats *out);
/* Role r's arena (borrowed, to read only; NULL before plan or where no
 * tensor has the role), *bytes its size, every tensor in it written at
 * plan: what a stream over a workload's own memory reads (`fathom tune`'s
 * bandwidth, no page touched anew). */
const void *exec_graph_arena(const exec_graph *g, exec_role r, size_t *bytes);

/* ---- engine settings (executor.c) --------------------------------------- */
/* How a graph's ops run: carried by the graph (exec_graph_settings_set) and
 * overridable per run (exec_run_opts.settings), so two graphs of one process
 * -- candidates of `fathom tune`, a replay beside a model -- run side by side
 * with different settings. A zero member means the process default
 * (exec_threads_set, exec_conv_algo_set, FATHOM_CONV_ALGO in the driver,
 * exec_hooks_set). */
struct exec_hooks;
typedef struct exec_settings {
    int threads;   /* intra-op threads of a sequential run, split among
                                 inter-op workers (0: exec_threads_get()) */
    int conv_algo; /* an exec_conv_algo (EXEC_CONV_DEFAULT: the process's) */
    /* the hooks that see this run's ops (node_def, ops, with their ctx;
     * borrowed, alive until the run returns: its records are handed over
     * before); NULL: the process's.  The run, step and tensor hooks stay
     * the process's. */
    const struct exec_hooks *hooks;
    int bind; /* an exec_bind: how the run's threads are pinned to CPUs
                 (EXEC_BIND_DEFAULT: the process's) */
} exec_settings;

/* Copies s into g (NULL: back to the process defaults). */
void exec_graph_settings_set(exec_graph *g, const exec_settings *s);
/* The settings g carries (zero members: the process defaults). */
exec_settings exec_graph_settings(const exec_graph *g);

typedef struct exec_run_opts {
    int inter;                     /* inter-op workers (<= 1: sequential) */
    const exec_settings *settings; /* NULL: the graph's; a zero member: the graph's */
    exec_phase max_phase;          /* run nodes up to this phase (forward: inference) */
    uint64_t *node_ns;             /* optional, one per node: adds each node's wall time */
    uint32_t first_node, end_node; /* run only nodes [first_node, end_node) (end 0: to the last);
                                      dependencies on nodes outside count as met */
} exec_run_opts;

exec_status exec_graph_run(exec_graph *g, const exec_run_opts *opts);
/* A run with M inter-op workers runs ops on the calling thread (worker 0)
 * and on M-1 threads of one pool for the process, which every graph's runs
 * share (one run at a time) and which stays from run to run while M does.
 * exec_workers_release() ends those threads and their OpenMP teams: idle
 * teams beside a run's slow its parallel regions (libgomp stops spinning
 * once its threads outnumber the CPUs), so a caller that turns to other
 * work with OpenMP, or to runs without workers, releases them first. */
void exec_workers_release(void);
/* Op invocations executed by this graph so far. */
uint64_t exec_graph_ops_run(const exec_graph *g);
/* Wall-clock nanoseconds this process has spent inside exec_graph_run, over
 * every graph: the engine's share of a model step (the rest is the model's
 * own work between runs: data feeding, a game, a decoder loop). */
uint64_t exec_engine_ns(void);

/* ---- threads (threads.c) ------------------------------------------------ */
/* Intra-op threads shared by OpenBLAS and the engine's kernels (one OpenMP
 * pool); 0 = all cores (exec_cpus()). Inter-op workers split them, never
 * oversubscribing.
 * The process default: a graph's or a run's exec_settings override it. */
void exec_threads_set(int intra);
int exec_threads_get(void);
/* The CPUs of the process's affinity (taskset, a cpuset), or the CPUs
 * online where it cannot be read: the places that binding chooses from. */
int exec_cores(void);
/* "All cores", the threads of fathom's defaults: exec_cores(), or fewer
 * where the process's cgroups allow it less CPU time (rounded up). */
int exec_cpus(void);
/* This process's cgroup CPU quota in CPUs, read once (0 where none is set). */
double exec_cpu_quota(void);
/* The CPUs' worth of time that the cgroups of the process allow it, read
 * under root ("" for this system's /proc and /sys): the CFS quota over its
 * period (cgroup v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us), the
 * least from its cgroup up to its hierarchy's root; 0 where none is set
 * (cgroup.c). */
double exec_cgroup_cpu_limit(const char *root);
/* The memory that the cgroups of the process allow it in bytes, read under
 * root as above (cgroup v2 memory.max, v1 memory.limit_in_bytes), the
 * least up the path; 0 where none is set. */
double exec_cgroup_mem_limit(const char *root);
/* The machine's memory and swap in bytes (MemTotal + SwapTotal of
 * proc/meminfo under root); 0 where unreadable. */
double exec_machine_memory(const char *root);
/* The limit exec_graph_plan checks a plan's arenas against: the cgroup's
 * memory limit or the machine's memory and swap, the less (read once), or
 * bytes given here (0: the system's again); *source (may be NULL) says
 * which, for a message; 0 where neither is known. */
double exec_memory_limit(const char **source);
void exec_memory_limit_set(double bytes);
/* bytes as a reader takes them in, into buf: "1.39 GiB", "256.0 MiB",
 * "4.0 KiB" (the memory messages of exec, replay and `fathom version`);
 * returns buf. */
const char *exec_bytes_text(char *buf, size_t n, double bytes);
/* Those CPUs as physical cores and sockets (sysfs); every CPU a core of
 * one socket where sysfs does not say. */
void exec_cpu_topology(int *physical, int *sockets);
const char *exec_blas_config(void);
const char *exec_cpu_model(void);

/* ---- thread binding (threads.c) ------------------------------------------ */
/* Which CPUs a run's threads may use: the calling thread and its OpenMP team
 * (which OpenBLAS's OpenMP build shares), or each inter-op worker and its
 * team. The places are the CPUs the process was given at its start, ordered
 * by socket, core and CPU (SMT siblings side by side); thread s of a run's n
 * (worker-major: worker w's team holds w * n/M ...) gets one place:
 *   NONE    every place (the threads migrate as the kernel schedules them);
 *   CLOSE   place s (mod places): neighbours share a core's SMT siblings, a socket;
 *   SPREAD  place floor(s * places / n): as far apart as the places allow.
 * Applied by pthread_setaffinity_np at a run's start when the thread's team
 * is not bound so already (a thread-local check: nothing to pay between runs
 * of one binding); the threads stay bound after the run. libgomp reads
 * OMP_PROC_BIND and OMP_PLACES once, at its start, so binding per run is
 * fathom's own. DEFAULT, in exec_settings, means the process's. */
typedef enum exec_bind { EXEC_BIND_DEFAULT, EXEC_BIND_NONE, EXEC_BIND_CLOSE, EXEC_BIND_SPREAD } exec_bind;
/* The process default (EXEC_BIND_DEFAULT: NONE). */
void exec_bind_set(exec_bind b);
exec_bind exec_bind_get(void);
/* "none", "close", "spread" ("default"); and back (-1 for anything else). */
const char *exec_bind_name(exec_bind b);
int exec_bind_from_name(const char *name);
/* NULL when b takes effect here, else why not (one phrase): OpenBLAS not
 * the OpenMP build (its own threads), the OpenMP runtime binding already
 * (OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY), one CPU, or SPREAD
 * placing every thread count as CLOSE does. NONE always takes effect. */
const char *exec_bind_unavailable(exec_bind b);
/* A `--bind` value: "none", "close" or "spread" into *b where it takes
 * effect here; else EXEC_ERR_ARG, exec_errmsg() saying why in one line
 * (an unknown name, or exec_bind_unavailable's reason), as every command
 * that takes the flag reports it. */
exec_status exec_bind_parse(const char *name, exec_bind *b);
/* The places (CPUs) binding uses, in order; how many (at most max). */
int exec_bind_places(int *cpus, int max);
/* The CPU of thread `slot` of n under b; -1 for NONE (every place). */
int exec_bind_cpu(exec_bind b, int slot, int n);

/* ---- denormal floats (threads.c) ----------------------------------------- */
/* Whether a run's threads flush denormal floats (magnitudes below 2^-126)
 * to zero: results that would be denormal become 0 and denormal inputs
 * read as 0 (x86-64: MXCSR's FTZ and DAZ; AArch64: FPCR.FZ), as
 * TensorFlow's threads do. A denormal operand costs an Intel core a
 * microcode assist of about a hundred cycles per instruction: the
 * Transformer's small training, whose softmax and gradients run into
 * them, took 2.34 s a step on an AVX-512 Xeon keeping them and 0.26 s
 * flushing them (AMD's cores take them at full speed). Set at a run's
 * start on the calling thread, its OpenMP team (which OpenBLAS's OpenMP
 * build shares) and each inter-op worker and its team, where the thread's
 * team is not set so already (a thread-local check, as binding's); the
 * threads keep the mode after the run, and threads the OpenMP runtime
 * starts later inherit it. 1 (the default): flush; 0: keep them (IEEE
 * gradual underflow, `fathom run --denormals keep`). */
void exec_denormals_set(int flush);
int exec_denormals_get(void);
/* "flush" or "keep"; and back (-1 for anything else). */
const char *exec_denormals_name(int flush);
int exec_denormals_from_name(const char *name);
/* the calling thread and its team of n (the run's intra-op threads) to the
 * process's mode: the engine calls it at each run's start, beside
 * exec_bind_team */
void exec_denormals_team(int n);

/* ---- convolution algorithm (ops/conv.c) --------------------------------- */
/* How Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter run: im2col +
 * GEMM (ops/conv.c), direct AVX2 kernels (ops/conv_direct.c; not for a
 * strided input gradient) or Winograd F(4x4, 3x3) (ops/conv_winograd.c; 3x3
 * stride 1 only). AUTO (the default) measures the algorithms that apply the
 * first time it meets a shape (op, sizes, threads) and keeps the fastest
 * for it in this process; the others force one, falling back to im2col
 * where it does not apply (or without AVX2 and FMA, for DIRECT). DEFAULT, in
 * exec_settings, means the process's. A graph or a run chooses through
 * exec_settings (`fathom run --conv-algo`, `fathom tune`); the driver sets
 * the process's from FATHOM_CONV_ALGO=auto|im2col|direct|winograd. */
typedef enum exec_conv_algo {
    EXEC_CONV_DEFAULT,
    EXEC_CONV_AUTO,
    EXEC_CONV_IM2COL,
    EXEC_CONV_DIRECT,
    EXEC_CONV_WINOGRAD
} exec_conv_algo;
/* The process default (EXEC_CONV_DEFAULT: AUTO); graphs and runs override
 * it through exec_settings. */
void exec_conv_algo_set(exec_conv_algo a);
exec_conv_algo exec_conv_algo_get(void);
/* The algorithm's name ("auto", "im2col", "direct", "winograd"; "default"). */
const char *exec_conv_algo_name(exec_conv_algo a);
/* "auto", "im2col", "direct", "winograd" -> the algorithm; -1 for anything else. */
int exec_conv_algo_from_name(const char *name);
/* A `--conv-algo` value into *a; EXEC_ERR_ARG with a one-line message for
 * an unknown name. */
exec_status exec_conv_algo_parse(const char *name, exec_conv_algo *a);
/* What AUTO chose for op kind (0 Conv2D, 1 Conv2DBackpropInput, 2
 * Conv2DBackpropFilter) of geometry {n, c, h, w, oc, kh, kw, sh, sw, ph, pw}
 * on nthreads threads (the last measurement's winner, where a void one is
 * to be measured again; a training graph's choice before an inference
 * graph's, whose Winograd keeps its transformed filters and is measured
 * so); EXEC_CONV_AUTO while that shape has not run. */
exec_conv_algo exec_conv_algo_chosen(int kind, const int64_t geom[11], int nthreads);
/* How many times AUTO has measured that shape: 1 once it has settled at
 * the first call; up to 3 where the load left an algorithm no clean run
 * (0: not met). */
int exec_conv_algo_tries(int kind, const int64_t geom[11], int nthreads);
/* How AUTO's choices on nthreads threads compare with forcing algorithm
 * a: *shapes the shapes it has chosen for (every op kind, every batch run
 * so far in this process), *same those where it chose what forcing a runs
 * (a, or im2col where a does not apply). */
void exec_conv_auto_agreement(exec_conv_algo a, int nthreads, int *shapes, int *same);
/* A measurement run of AUTO is clean when the calling thread's CPU time
 * is at least this fraction of its wall time (default 0.7; <= 0 restores
 * it). Tests set it above 1 to make every run look disturbed. */
void exec_conv_pick_clean_set(double fraction);

/* The widest vector instructions the engine's own vector kernels (the
 * Winograd transforms, the direct convolutions) use: the best the CPU has
 * (AUTO, the default) or, to compare or test the narrower paths on one
 * machine, a narrower one (SCALAR leaves the direct convolutions out).
 * exec_simd_set caps its argument at exec_simd_best() and returns the
 * level in effect. */
typedef enum exec_simd { EXEC_SIMD_AUTO, EXEC_SIMD_SCALAR, EXEC_SIMD_AVX2, EXEC_SIMD_AVX512 } exec_simd;
exec_simd exec_simd_set(exec_simd s);
exec_simd exec_simd_best(void);
/* A level's name: "avx512", "avx2", or for SCALAR the baseline the build
 * targets ("x86-64-v2", "native", "aarch64"); and the sets this build
 * carries, e.g. "x86-64-v2, avx2, avx512" (`fathom version`). */
const char *exec_simd_name(exec_simd s);
const char *exec_simd_built(void);
/* The level a name gives: "avx512", "avx2", "baseline" (or the baseline's
 * own name); AUTO for NULL or ""; -1 for any other name. The environment's
 * FATHOM_SIMD, so read, caps AUTO (to compare the sets on one machine). */
int exec_simd_from_name(const char *name);
/* MatMul's register tiles (exec/ops/matmul_tile.c) against the BLAS:
 * exec_matmul_tiles_probe runs the process's one measurement (the same
 * product both ways on one thread) and returns whether the tiles won, with
 * both GFLOP/s (either pointer may be NULL). For tests and comparisons,
 * exec_matmul_tiles_force(1, s) uses the tiles of set s (AUTO: the best the
 * CPU has; capped at it) wherever they apply, (0, _) never, (-1, _) (the
 * default) as measured. */
int exec_matmul_tiles_probe(double *tile_gflops, double *blas_gflops);
void exec_matmul_tiles_force(int mode, exec_simd s);
/* What MatMul's general path (not its skinny or packed ones) chose for a
 * product of shape M x N x K with those transposes, trying both at its
 * first EXEC_MATMUL_TRIAL_CALLS calls of the shape unless forced: 1 the
 * tiles, 2 the BLAS, 0 not chosen (not met that often, forced, or no
 * vector set for the tiles). */
#define EXEC_MATMUL_TRIAL_CALLS 3
int exec_matmul_choice(int64_t M, int64_t N, int64_t K, int ta, int tb);

/* ---- the hook (executor.c) ---------------------------------------------- */
/* The one interface between the engine and the tracer (trace schema 2,
 * docs/design.md, "The trace"). While no hook set is installed each op costs one
 * predicted branch. While one is:
 *   - before a graph's first run under these hooks, node_def describes each
 *     of its nodes once (op, data flow, attributes, FLOPs and bytes);
 *   - each executing thread times its op invocations into a buffer of its
 *     own (node, begin, end: two clock reads, no lock, no atomic RMW) and
 *     hands it to `ops` when it is full and when the thread finishes its
 *     share of a graph run, so every op of a step is delivered before the
 *     step's end;
 *   - tensor_alloc/tensor_free at planning and release; the run loop calls
 *     run_begin/end and step_begin/end.
 * Times are CLOCK_MONOTONIC nanoseconds (LTTng's default clock). NULL
 * members are skipped; every callback gets the set's ctx, so a hook set
 * keeps its state in an object of its own (one per run, if need be) rather
 * than in globals. The process's set (exec_hooks_set: the tracer's) sees
 * every run that names none; a graph or a run names its own in
 * exec_settings.hooks. A set with neither node_def nor ops sees no op: its
 * runs are untimed, as with no hooks. */
typedef struct exec_run_info {
    const char *model, *mode, *preset, *version, *blas, *cpu;
    uint32_t batch, steps, threads, inter;
    uint64_t seed;
} exec_run_info;

typedef struct exec_hooks {
    void *ctx; /* the hook set's own state, passed back to every callback */
    void (*node_def)(void *ctx, const exec_graph *g, const exec_node *n, uint64_t flops, uint64_t bytes);
    void (*ops)(void *ctx, const exec_graph *g, uint32_t n, const uint32_t *nodes, const uint64_t *begins,
                const uint64_t *ends);
    void (*tensor_alloc)(void *ctx, const exec_graph *g, const exec_tensor *t);
    void (*tensor_free)(void *ctx, const exec_graph *g, const exec_tensor *t);
    void (*run_begin)(void *ctx, const exec_run_info *info);
    void (*run_end)(void *ctx, int32_t status, uint64_t ops);
    void (*step_begin)(void *ctx, uint32_t step);
    void (*step_end)(void *ctx, uint32_t step, double loss);
    /* after node_def has described every node of g (a statedump's end) */
    void (*graph_described)(void *ctx, const exec_graph *g);
} exec_hooks;
/* Installs h (copied; NULL uninstalls). An install whose node_def or ctx
 * differs from the previous install's starts a new epoch: graphs describe their
 * nodes again before their next traced run. Installing the same node_def
 * again (tracing paused and resumed, a wrapper around the same tracer)
 * does not repeat the descriptions. */
void exec_hooks_set(const exec_hooks *h);
/* Asks every graph to describe its nodes again (node_def, then
 * graph_described) before its next traced run: a statedump for a reader
 * that joined after the first descriptions. Called between graph runs. */
void exec_trace_restate(void);
/* The hook set in force (NULL: untraced); borrowed. */
const exec_hooks *exec_hooks_cur(void);

/* Op records a thread buffers before handing them to the `ops` hook
 * (EXEC_TRACE_BUFFER_DEFAULT when 0; at most EXEC_TRACE_BUFFER_MAX). A
 * larger buffer means fewer, larger `ops` events; a crash loses at most
 * the records still buffered. Takes effect for buffers made afterwards. */
#define EXEC_TRACE_BUFFER_DEFAULT 256
#define EXEC_TRACE_BUFFER_MAX 16384 /* 320 KiB an event: well inside a 1 MiB sub-buffer */
void exec_trace_buffer_set(uint32_t records);
uint32_t exec_trace_buffer_get(void);

/* The clock an op record's begin and end are read from; the `ops` hook
 * always sees CLOCK_MONOTONIC ns. AUTO (the default) is the TSC where the
 * kernel keeps CLOCK_MONOTONIC on it (x86-64, clocksource "tsc": invariant
 * and synchronized across CPUs), else clock_gettime(). The calling
 * thread's buffer is flushed and takes the setting at once, the others' at
 * their next flush; exec_trace_clock_get() gives the one in effect
 * (MONOTONIC or TSC). */
typedef enum { EXEC_TRACE_CLOCK_AUTO, EXEC_TRACE_CLOCK_MONOTONIC, EXEC_TRACE_CLOCK_TSC } exec_trace_clock;
void exec_trace_clock_set(exec_trace_clock c); /* TSC where it is not usable: MONOTONIC */
exec_trace_clock exec_trace_clock_get(void);

/* Tensor ids are per graph; a process may run several graphs (deepq's
 * target network). The id a trace records is unique in the process:
 * exec_trace_tensor_id(g, id) = the graph's base + id (bases are 2^20 apart).
 * exec_trace_graph_id(g) is the graph's number in the process. */
uint32_t exec_trace_tensor_id(const exec_graph *g, uint32_t id);
uint32_t exec_trace_graph_id(const exec_graph *g);

/* For run loops (models/, replay/): forward to the hooks, if any. */
void exec_trace_run_begin(const exec_run_info *info);
void exec_trace_run_end(int32_t status);
void exec_trace_step_begin(uint32_t step);
void exec_trace_step_end(uint32_t step, double loss);
/* Op invocations executed under hooks in this process (all graphs and
 * threads): what run_end reports. */
uint64_t exec_ops_dispatched(void);

/* ---- interruption (executor.c) ------------------------------------------ */
/* Asks every graph run to stop at its next op boundary: the run returns
 * EXEC_ERR_INTERRUPTED after flushing its trace buffers. Async-signal-safe
 * (a SIGINT/SIGTERM handler calls it with the signal number). */
void exec_interrupt(int sig);
/* The signal given to exec_interrupt() (0: none). */
int exec_interrupted(void);

/* ---- the op table (optable.c) ------------------------------------------- */
typedef struct exec_shape {
    exec_dtype dtype;
    int ndim;
    int64_t d[EXEC_MAX_DIMS];
} exec_shape;
typedef struct exec_kctx exec_kctx;

typedef struct exec_op_info {
    const char *name;
    exec_class cls;
    int nin, nout;
    const char *attrs; /* attribute layout, in words */
    const char *flops; /* FLOP formula, in words */
    exec_status (*shape)(const exec_graph *g, const exec_node *n, exec_shape *out);
    exec_status (*fwd)(exec_kctx *k, const exec_node *n);
    void (*cost)(const exec_graph *g, const exec_node *n, uint64_t *flops, uint64_t *bytes);
    /* Appends the gradient nodes: dout[i] is the gradient of output i (0 if
     * none), din[i] receives the gradient of input i (0 if none). */
    exec_status (*grad)(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din);
} exec_op_info;

extern const exec_op_info exec_op_table[EXEC_OP_COUNT];

/* FLOPs and ideal bytes of one node. */
void exec_node_cost(const exec_graph *g, const exec_node *n, uint64_t *flops, uint64_t *bytes);

#endif
