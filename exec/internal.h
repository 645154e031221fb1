/* internal.h -- what the engine's own files share: the graph's layout, the
 * kernel context, and helpers for writing ops (exec/ops/ *.c). Not installed;
 * nothing outside exec/ includes it. */
#ifndef FATHOM_EXEC_INTERNAL_H
#define FATHOM_EXEC_INTERNAL_H

#include "base/alloc.h"
#include "base/clock.h"
#include "exec.h"

#include <assert.h>
#include <math.h>
#include <string.h>
#include <time.h>

#define EXEC_MAX_WORKERS 16
#define EXEC_MAX_TENSORS (1u << 20) /* per graph: the trace id space of one graph */

struct exec_graph {
    uint64_t seed;
    uint32_t trace_base;   /* exec_trace_tensor_id() = trace_base + id */
    uint32_t trace_id;     /* exec_trace_graph_id(): unique in the process */
    uint64_t traced_epoch; /* the hook epoch whose node_defs this graph emitted (0: none) */
    /* the node_def hook they went to (a run's own hooks may differ from the process's) */
    void (*traced_node_def)(void *ctx, const exec_graph *g, const exec_node *n, uint64_t flops, uint64_t bytes);
    void *traced_ctx;   /* ... and the ctx of that hook set */
    uint64_t runs;      /* completed exec_graph_run calls */
    uint64_t ops_run;   /* op invocations executed */
    exec_status status; /* sticky builder error */
    exec_phase phase;   /* phase of nodes added now */
    bool planned;
    bool reuse; /* exec_graph_set_reuse */

    exec_tensor *tensors; /* index = id; [0] unused */
    uint32_t ntensors, cap_tensors;
    exec_node *nodes;
    uint32_t nnodes, cap_nodes;

    uint32_t *weights; /* trainable weight ids */
    uint32_t nweights, cap_weights;
    uint8_t *init;     /* per tensor: exec_init + 1 (0: none) */
    float *init_scale; /* per tensor */
    float *init_value; /* per tensor: constant fill */
    uint32_t *grad;    /* per tensor: gradient id (after exec_gradients) */

    uint32_t grad_seed; /* exec_gradients' dloss, the constant 1 (0: none) */

    void *arena[EXEC_ROLE_COUNT];
    size_t arena_bytes[EXEC_ROLE_COUNT];

    /* executor state (executor.c) */
    uint32_t *order_deps; /* flattened dependency lists */
    uint32_t *dep_start;  /* per node: start in order_deps; nnodes + 1 */
    uint32_t *succ;       /* flattened successor lists */
    uint32_t *succ_start;
    uint32_t dep_nodes;              /* nnodes when the lists were built */
    void *scratch[EXEC_MAX_WORKERS]; /* per-worker kernel workspace */
    size_t scratch_cap[EXEC_MAX_WORKERS];
    size_t peak_workspace;
    /* what kernels derive from a tensor and keep across runs (exec_kcache) */
    struct exec_kcache *kcache; /* the buffers, each shared by the nodes that derive the same */
    uint32_t kcache_n, kcache_cap;
    uint32_t *kcache_at;    /* per node: its entry + 1 (0: none) */
    uint8_t *written;       /* per tensor: a node of the graph writes it */
    uint32_t kcache_nodes;  /* nnodes when kcache_at and written were made */
    size_t kcache_bytes;    /* all of it, counted as workspace */
    exec_settings settings; /* exec_graph_settings_set(); zero members: the process's */
};

/* Binds the calling thread and its OpenMP team of n threads to slots
 * [base, base + n) of a run's `total` threads under b (DEFAULT: the
 * process's; NONE: back to the process's CPUs); nothing when this thread's
 * team is bound so already, or when b cannot take effect (threads.c). */
void exec_bind_team(exec_bind b, int base, int n, int total);

/* The context a kernel runs in: its graph, its threads, its scratch. */
struct exec_kctx {
    exec_graph *g;
    int nthreads;             /* intra-op threads this kernel may use */
    int worker;               /* scratch slot */
    exec_conv_algo conv_algo; /* this run's convolution algorithm (never DEFAULT) */
    const exec_hooks *hooks;  /* this run's hooks (NULL: untraced) */
};

/* for (int64_t i = 0; i < total; i++) { body }, vectorized, and threaded
 * over k's threads when total > min (EXEC_PAR_SUM: the same with a
 * + reduction into acc). The serial case is a loop of its own: GCC runs an
 * `omp parallel for simd` whose if() is false through a scalar path (8 ns
 * an element for Sigmoid there, 1.4 in a plain `omp simd` loop). */
#define EXEC_PRAGMA(x) _Pragma(#x)
#define EXEC_PAR_FOR(k, total, min, ...)                                  \
    do {                                                                  \
        if ((total) > (min) && (k)->nthreads > 1) {                       \
            EXEC_PRAGMA(omp parallel for simd num_threads((k)->nthreads)) \
            for (int64_t i = 0; i < (total); i++) {                       \
                __VA_ARGS__                                               \
            }                                                             \
        } else {                                                          \
            EXEC_PRAGMA(omp simd)                                         \
            for (int64_t i = 0; i < (total); i++) {                       \
                __VA_ARGS__                                               \
            }                                                             \
        }                                                                 \
    } while (0)
#define EXEC_PAR_SUM(k, total, min, acc, ...)                                                \
    do {                                                                                     \
        if ((total) > (min) && (k)->nthreads > 1) {                                          \
            EXEC_PRAGMA(omp parallel for simd reduction(+ : acc) num_threads((k)->nthreads)) \
            for (int64_t i = 0; i < (total); i++) {                                          \
                __VA_ARGS__                                                                  \
            }                                                                                \
        } else {                                                                             \
            EXEC_PRAGMA(omp simd reduction(+ : acc))                                         \
            for (int64_t i = 0; i < (total); i++) {                                          \
                __VA_ARGS__                                                                  \
            }                                                                                \
        }                                                                                    \
    } while (0)

/* The elements of a loop below which a kernel keeps to one thread: the
 * break-even of a parallel region against the loop's serial time, both
 * measured once per process (threads.c), for a streaming loop (a few
 * arithmetic ops an element) or a transcendental one (exp, tanh, sigmoid). */
typedef enum exec_work { EXEC_WORK_STREAM, EXEC_WORK_MATH, EXEC_WORK_COUNT } exec_work;
int64_t exec_par_min(exec_work w);
/* The least measured cost of one parallel region of the team, in ns. */
double exec_fork_ns(void);
/* The loops exec_par_min times, ns an element over n floats, the least of
 * `reps` runs (ops/calibrate.c, compiled per vector set as the kernels
 * are); exec_calib_now gives the copy of the set in use (isa.c). */
typedef double (*exec_calib_fn)(int64_t n, int reps);
double exec_calib_stream(int64_t n, int reps);
double exec_calib_math(int64_t n, int reps);
exec_calib_fn exec_calib_now(exec_work w);

/* Scratch memory for a kernel (the workspace role); NULL on failure. Valid
 * until the kernel returns. */
void *exec_kscratch(exec_kctx *k, size_t bytes);
/* A new tensor version stamp, unique in the process (exec_tensor.version). */
uint64_t exec_version_next(void);

/* A buffer of `bytes` that node n keeps across the graph's runs for what it
 * derives from tensor `from` (MatMul's packed weight, the Winograd
 * transform of a filter), and whether it holds that already: *fresh is
 * true when it was filled from the tensor's current version (the kernel
 * may use it as it is), false when the kernel must fill it now and then
 * call exec_kcache_filled. Nodes of the same op that ask with the same
 * from, how and bytes share one buffer: how is 0 where what is derived
 * depends on the tensor alone (the unrolled steps of a recurrent net, one
 * packing of their weight), n->id + 1 where it depends on the node too.
 * NULL where a node of the graph writes `from` (its training updates: what
 * is derived would be stale at the next run, so the kernel works in its
 * scratch as before), where another node fills the shared buffer at this
 * moment (this run goes without), or where memory runs out. Memory.c;
 * freed with the arenas. */
/* Buffer forwarding (forwarding.c): sets every tensor's storage, the
 * tensor whose buffer it uses (itself, or an input its node writes over). */
exec_status exec_plan_forwarding(exec_graph *g);
/* Buffer reuse by lifetimes (lifetimes.c), after forwarding, where
 * exec_graph_set_reuse asked for it: intermediates whose lifetimes do not
 * overlap share a storage. aligned: a buffer's size for a tensor's bytes. */
exec_status exec_plan_lifetimes(exec_graph *g, size_t (*aligned)(size_t));

void *exec_kcache(exec_kctx *k, const exec_node *n, uint32_t from, uint32_t how, size_t bytes, bool *fresh);
/* After exec_kcache gave node n a buffer to fill: ok, it holds the
 * tensor's version now; !ok, it was not filled (made again next time). */
void exec_kcache_filled(exec_kctx *k, const exec_node *n, bool ok);
/* Whether exec_kcache keeps what is derived from tensor `from` (no node of
 * the graph writes it), without making room for it. */
bool exec_kcache_keeps(exec_kctx *k, uint32_t from);
/* Lets go of what node n keeps (a kernel that measured a kept form and
 * chose another): its bytes leave the accounting with its last user. */
void exec_kcache_drop(exec_kctx *k, const exec_node *n);

/* MatMul c[M,N] = op(a) op(b) (a [K,M] when ta, b [N,K] when tb) in the
 * CPU's vector register tiles (ops/matmul_tile.c); true where c holds the
 * product (the first calls of a shape try the tiles and the BLAS in it);
 * false where the tiles do not apply or tried slower than the BLAS on this
 * machine, c then holding no product: the caller's BLAS writes it. */
bool exec_matmul_tiled(exec_kctx *k, float *c, const float *a, const float *b, int64_t M, int64_t N, int64_t K, int ta,
                       int tb);
/* b [K,N] packed for the tiles: column panels of 48 floats, [N/48][K][48]
 * (zero-padded), which the tiles read in order where b in place is read
 * with a stride of N floats a row (a weight kept packed while unchanged:
 * exec_kcache). exec_matmul_packed_floats: the packing's size (0 where
 * the tiles would not run it: the BLAS measured faster, or N too narrow);
 * exec_matmul_tiled_packed: c[M,N] = a[M,K] b from the packing, false
 * (c untouched) where the tiles do not apply. */
int64_t exec_matmul_packed_floats(int64_t K, int64_t N);
void exec_matmul_pack(float *bp, const float *b, int64_t K, int64_t N, int nthreads);
bool exec_matmul_tiled_packed(exec_kctx *k, float *c, const float *a, const float *bp, int64_t M, int64_t N, int64_t K);
/* c[M,N] = op(a) op(b) + beta c (row-major, strides lda/ldb/ldc): the
 * register tiles where the probe chose them and beta is 0 or 1, else
 * cblas_sgemm. nthreads: the tiles' team (1 inside a parallel region);
 * k: scratch (NULL: the heap). */
void exec_gemm(exec_kctx *k, int nthreads, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
/* exec_gemm on the calling thread alone (inside a parallel region: one
 * call per thread), in the caller's scratch ws of exec_gemm1_scratch(tb,
 * M, K) floats: no allocation per call. */
int64_t exec_gemm1_scratch(int tb, int64_t M, int64_t K);
void exec_gemm1(float *ws, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, const float *b,
                int64_t ldb, float beta, float *c, int64_t ldc);
/* A random seed for this node in this run, deterministic for the graph seed. */
uint64_t exec_kseed(const exec_kctx *k, const exec_node *n);

static inline exec_tensor *exec_t(const exec_graph *g, uint32_t id) { return &g->tensors[id]; }
static inline exec_tensor *exec_in(const exec_kctx *k, const exec_node *n, int i) { return &k->g->tensors[n->in[i]]; }
static inline exec_tensor *exec_out(const exec_kctx *k, const exec_node *n, int i) { return &k->g->tensors[n->out[i]]; }
static inline float *exec_inf(const exec_kctx *k, const exec_node *n, int i)
{
    return (float *)k->g->tensors[n->in[i]].data;
}
static inline float *exec_outf(const exec_kctx *k, const exec_node *n, int i)
{
    return (float *)k->g->tensors[n->out[i]].data;
}
static inline const exec_tensor *exec_gin(const exec_graph *g, const exec_node *n, int i)
{
    return &g->tensors[n->in[i]];
}

/* Shape helpers for shape functions. */
static inline void exec_shape_of(exec_shape *s, const exec_tensor *t)
{
    s->dtype = t->dtype;
    s->ndim = t->ndim;
    for (int i = 0; i < EXEC_MAX_DIMS; i++)
        s->d[i] = i < t->ndim ? t->shape[i] : 1;
}
static inline void exec_shape_set(exec_shape *s, exec_dtype dt, int ndim, const int64_t *d)
{
    s->dtype = dt;
    s->ndim = ndim;
    for (int i = 0; i < EXEC_MAX_DIMS; i++)
        s->d[i] = i < ndim ? d[i] : 1;
}
int64_t exec_numel(int ndim, const int64_t *shape);
bool exec_same_shape(const exec_tensor *a, const exec_tensor *b);
/* b broadcasts onto a: same shape, a scalar, or a's trailing dims. Returns
 * the period (numel of b) or 0 if not broadcastable. */
int64_t exec_bcast_period(const exec_tensor *a, const exec_tensor *b);

/* A gradient rule finds din[i] == EXEC_GRAD_WANTED for each input whose
 * gradient is needed (0: not needed) and writes the gradient tensor id. */
#define EXEC_GRAD_WANTED UINT32_MAX

/* Gradient-rule helpers: the builders, in graph-building form. */
uint32_t exec_op1(exec_graph *g, exec_op op, int nin, const uint32_t *in, int nattrs, const int64_t *attrs);
/* Sums g over leading axes so it takes the shape of `like` (broadcast undo). */
uint32_t exec_unbroadcast(exec_graph *g, uint32_t grad, uint32_t like);
/* Records a builder error (first one wins) and returns 0. */
uint32_t exec_graph_fail(exec_graph *g, exec_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The forward functions in the op table's order (ops/kernel_table.c): the
 * baseline's, and those of the vector set in use on this CPU (isa.c: the
 * executor calls these). */
typedef exec_status (*exec_fwd_fn)(exec_kctx *k, const exec_node *n);
extern const exec_fwd_fn exec_kernels[EXEC_OP_COUNT];
const exec_fwd_fn *exec_kernels_now(void);

/* The op functions every ops/ *.c file defines, declared from the table. */
#define GRAD_DECL_GRAD(name) \
    exec_status op_grad_##name(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din);
#define GRAD_DECL_NOGRAD(name)
#define X(name, cls, nin, nout, cost, grad, attrs, words)                                  \
    exec_status op_shape_##name(const exec_graph *g, const exec_node *n, exec_shape *out); \
    exec_status op_fwd_##name(exec_kctx *k, const exec_node *n);                           \
    GRAD_DECL_##grad(name)
#include "ops.def"
#undef X

/* Cost formulas (cost.c), named in ops.def's COST column. */
#define EXEC_COST_FN(fn) void fn(const exec_graph *g, const exec_node *n, uint64_t *flops, uint64_t *bytes)
EXEC_COST_FN(cost_io);    /* 0 FLOPs: data movement */
EXEC_COST_FN(cost_elem1); /* 1 per output element */
EXEC_COST_FN(cost_elem4); /* 4 per output element (transcendental-ish) */
EXEC_COST_FN(cost_addn);
EXEC_COST_FN(cost_reduce); /* 1 per input element */
EXEC_COST_FN(cost_matmul);
EXEC_COST_FN(cost_batchmatmul);
EXEC_COST_FN(cost_softmax_xent);
EXEC_COST_FN(cost_apply_gd);
/* ---- losses, random, optimizers and clipping ---- */
EXEC_COST_FN(cost_sampled_softmax);      /* 2*N*(S+1)*D + 6*N*(S+1) */
EXEC_COST_FN(cost_sampled_softmax_grad); /* 4*N*(S+1)*D */
EXEC_COST_FN(cost_ctc);                  /* 5*T*N*C softmax + 10 per lattice cell */
EXEC_COST_FN(cost_huber);                /* 5 per element */
EXEC_COST_FN(cost_sigmoid_xent);         /* 7 per element */
EXEC_COST_FN(cost_apply_momentum);       /* 3 per parameter */
EXEC_COST_FN(cost_apply_adam);           /* 12 per parameter */
EXEC_COST_FN(cost_apply_rmsprop);        /* 11 per parameter */
EXEC_COST_FN(cost_clip);                 /* 3 per element, over every input */
/* convolution / pooling / normalization (the nn family) */
EXEC_COST_FN(cost_conv2d); /* Conv2D and both backprops: 2*N*OC*OH*OW*C*KH*KW */
EXEC_COST_FN(cost_pool);   /* KH*KW per pooled element */
EXEC_COST_FN(cost_lrn);
EXEC_COST_FN(cost_batch_norm);
EXEC_COST_FN(cost_layer_norm); /* LayerNorm 8, LayerNormGrad 13 per element */
/* ---- math family (arith.c, activation.c, reduction.c, movement.c) ---- */
EXEC_COST_FN(cost_elem2); /* 2 per output element */
EXEC_COST_FN(cost_elem3); /* 3 per output element */
EXEC_COST_FN(cost_elem8); /* 8 per output element (Pow: exp and log) */
EXEC_COST_FN(cost_fill);  /* 0 FLOPs; writes the outputs, reads nothing */
/* ideal bytes: every distinct input read once, every output written once */
uint64_t exec_io_bytes(const exec_graph *g, const exec_node *n);

#endif
