/* executor.c -- runs a planned graph: the single dispatch point, the
 * sequential loop and the inter-op scheduler (dependency counts, a ready
 * queue ordered by node id, M workers splitting the intra-op threads).  The
 * first worker is the calling thread; the others, one pool for the process,
 * are started at the first inter-op run and kept, idle between runs, until
 * a run asks for another number of them or exec_workers_release(): a trace
 * shows the same M threads in every step, and no step pays for starting
 * threads (or their OpenMP teams). Where every thread of a run has a CPU,
 * an idle worker spins a moment (SCHED_SPIN_NS) for the next ready op or
 * run before it sleeps. */
#define _GNU_SOURCE /* pthread_setname_np */
#include "internal.h"
#include "rng.h"

#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* --inter's bound (base/run_options.def) is the most workers a run has:
 * a larger value would be accepted and then silently clamped. */
#define X(name, flag, lo, hi) enum { RUN_OPTION_HI_##name = (hi) };
#include "base/run_options.def"
#undef X
_Static_assert(RUN_OPTION_HI_inter == EXEC_MAX_WORKERS, "--inter's bound is EXEC_MAX_WORKERS");

static exec_hooks g_hooks;
static const exec_hooks *g_hooks_ptr;
static _Atomic uint64_t g_hooks_epoch; /* bumped by every install */
static _Atomic uint32_t g_trace_cap = EXEC_TRACE_BUFFER_DEFAULT;
static volatile sig_atomic_t g_interrupt;

void exec_hooks_set(const exec_hooks *h)
{
    if (h) {
        /* a set whose node_def differs from the last one's starts a new
         * epoch (its trace has not seen the graphs); the same node_def and ctx again
         * (tracing paused and resumed, a wrapper around the same tracer)
         * goes on in the epoch whose graphs are described */
        if (h->node_def != g_hooks.node_def || h->ctx != g_hooks.ctx || !atomic_load(&g_hooks_epoch))
            atomic_fetch_add(&g_hooks_epoch, 1);
        g_hooks = *h;
        g_hooks_ptr = &g_hooks;
    } else {
        g_hooks_ptr = NULL;
    }
}

const exec_hooks *exec_hooks_cur(void) { return g_hooks_ptr; }

void exec_trace_restate(void) { atomic_fetch_add(&g_hooks_epoch, 1); }

void exec_trace_buffer_set(uint32_t records)
{
    if (records == 0)
        records = EXEC_TRACE_BUFFER_DEFAULT;
    atomic_store(&g_trace_cap, records > EXEC_TRACE_BUFFER_MAX ? EXEC_TRACE_BUFFER_MAX : records);
}
uint32_t exec_trace_buffer_get(void) { return atomic_load(&g_trace_cap); }

void exec_interrupt(int sig) { g_interrupt = sig ? sig : 1; }
int exec_interrupted(void) { return g_interrupt; }

/* ---- the op clock ----------------------------------------------------------
 * Where the kernel keeps CLOCK_MONOTONIC on the TSC, an op's begin and end
 * are TSC reads: one instruction and no memory, where clock_gettime() reads
 * the vDSO's data page, which the op's kernel has mostly evicted by then
 * (in a traced seq2seq step, about 100 ns a read against 30 in a loop, and
 * two reads an op were most of what tracing cost the process). A buffer
 * converts its ticks to ns when it flushes, on the line between two
 * anchors (a tick count and the clock read together): the one taken at its
 * last flush and one taken now. */
static _Atomic int g_trace_clock = EXEC_TRACE_CLOCK_AUTO;
static int g_tsc_usable;
static pthread_once_t g_tsc_once = PTHREAD_ONCE_INIT;

static void tsc_probe(void)
{
#if defined(__x86_64__)
    char cs[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f) {
        if (!fgets(cs, sizeof cs, f))
            cs[0] = 0;
        fclose(f);
    }
    g_tsc_usable = strcmp(cs, "tsc\n") == 0;
#endif
}

static int trace_tsc_on(void)
{
    pthread_once(&g_tsc_once, tsc_probe);
    return g_tsc_usable && atomic_load_explicit(&g_trace_clock, memory_order_relaxed) != EXEC_TRACE_CLOCK_MONOTONIC;
}

exec_trace_clock exec_trace_clock_get(void)
{
    return trace_tsc_on() ? EXEC_TRACE_CLOCK_TSC : EXEC_TRACE_CLOCK_MONOTONIC;
}

static inline uint64_t tsc_read(void)
{
#if defined(__x86_64__)
    return __rdtsc();
#else
    return base_now_ns(); /* never used: trace_tsc_on() is 0 */
#endif
}

/* A tick count and CLOCK_MONOTONIC at the same moment (the ticks' mean
 * around the clock read; again where the thread was preempted between). */
static void tsc_anchor(uint64_t *ns, uint64_t *tk)
{
    for (int i = 0;; i++) {
        uint64_t a = tsc_read();
        *ns = base_now_ns();
        uint64_t c = tsc_read();
        *tk = a + (c - a) / 2;
        if (c - a < 20000 || i == 3) /* some microseconds at any TSC rate */
            return;
    }
}

/* ---- per-thread op records (trace schema 2) ---------------------------------
 * Each thread that executes ops under hooks owns one buffer: it alone writes
 * it, so appending a record is two clock reads and three stores. Buffers are
 * registered in a list (under a lock, once per thread) so that
 * exec_ops_dispatched() can sum their counts and the memory stays reachable;
 * a thread's exit unregisters and frees its buffer. */
typedef struct tbuf {
    const exec_graph *g;     /* the graph of the buffered records */
    const exec_hooks *hooks; /* the hooks they go to (the run's) */
    uint32_t n, cap;
    _Atomic uint64_t emitted; /* records handed to the hook; written by the owner only */
    struct tbuf *next, *prev;
    uint32_t *nodes;
    uint64_t *begins, *ends; /* TSC ticks until the flush where tsc is set, else ns */
    int tsc;
    uint64_t at_ns, at_tk; /* the anchor of the last flush */
    double ns_tick;        /* ns a tick over the last interval of 1 ms or more; 0: none yet */
} tbuf;

static pthread_mutex_t g_tbuf_lock = PTHREAD_MUTEX_INITIALIZER;
static tbuf *g_tbufs;
static uint64_t g_tbuf_retired; /* records of buffers of exited threads */
static pthread_key_t g_tbuf_key;
static pthread_once_t g_tbuf_once = PTHREAD_ONCE_INIT;
static _Thread_local tbuf *t_buf;

static void tbuf_release(void *arg)
{
    tbuf *b = arg;
    pthread_mutex_lock(&g_tbuf_lock);
    g_tbuf_retired += atomic_load_explicit(&b->emitted, memory_order_relaxed);
    if (b->prev)
        b->prev->next = b->next;
    else
        g_tbufs = b->next;
    if (b->next)
        b->next->prev = b->prev;
    pthread_mutex_unlock(&g_tbuf_lock);
    base_free(b);
}

static void tbuf_key_make(void) { pthread_key_create(&g_tbuf_key, tbuf_release); }

/* The buffer's clock from the setting (while it holds no records). */
static void tbuf_clock(tbuf *b)
{
    int tsc = trace_tsc_on();
    if (tsc && !b->tsc)
        tsc_anchor(&b->at_ns, &b->at_tk);
    b->tsc = tsc;
}

static tbuf *tbuf_make(void)
{
    pthread_once(&g_tbuf_once, tbuf_key_make);
    uint32_t cap = atomic_load(&g_trace_cap);
    size_t bytes = sizeof(tbuf) + (size_t)cap * (sizeof(uint32_t) + 2 * sizeof(uint64_t)) + 16;
    tbuf *b = base_calloc(1, bytes);
    if (!b)
        return NULL;
    b->cap = cap;
    b->begins = (uint64_t *)(b + 1);
    b->ends = b->begins + cap;
    b->nodes = (uint32_t *)(b->ends + cap);
    tbuf_clock(b);
    pthread_mutex_lock(&g_tbuf_lock);
    b->next = g_tbufs;
    if (g_tbufs)
        g_tbufs->prev = b;
    g_tbufs = b;
    pthread_mutex_unlock(&g_tbuf_lock);
    pthread_setspecific(g_tbuf_key, b);
    t_buf = b;
    return b;
}

/* The buffered ticks in ns: on the line from the last anchor to one taken
 * now (its slope from the last interval of 1 ms or more where this one is
 * shorter, which the anchors' few ns of jitter would tilt), inside both. */
static void tbuf_ticks_to_ns(tbuf *b)
{
    uint64_t ns, tk;
    tsc_anchor(&ns, &tk);
    double rate = b->ns_tick;
    if (tk > b->at_tk && ns > b->at_ns && (ns - b->at_ns >= 1000000 || rate == 0)) {
        rate = (double)(ns - b->at_ns) / (double)(tk - b->at_tk);
        if (ns - b->at_ns >= 1000000)
            b->ns_tick = rate;
    }
    uint64_t *v[2] = { b->begins, b->ends };
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; i < b->n; i++) {
            uint64_t t = v[k][i];
            uint64_t d = t > b->at_tk ? (uint64_t)((double)(t - b->at_tk) * rate + 0.5) : 0;
            v[k][i] = d < ns - b->at_ns ? b->at_ns + d : ns;
        }
    b->at_ns = ns, b->at_tk = tk;
}

/* Hands the calling thread's buffered records to the hooks. */
static void tbuf_flush(tbuf *b)
{
    if (!b)
        return;
    if (b->n) {
        if (b->tsc)
            tbuf_ticks_to_ns(b);
        const exec_hooks *h = b->hooks;
        if (h && h->ops)
            h->ops(h->ctx, b->g, b->n, b->nodes, b->begins, b->ends);
        atomic_store_explicit(&b->emitted, atomic_load_explicit(&b->emitted, memory_order_relaxed) + b->n,
                              memory_order_relaxed);
        b->n = 0;
    }
    if (__builtin_expect(b->tsc != trace_tsc_on(), 0))
        tbuf_clock(b);
}

static void trace_flush_thread(void) { tbuf_flush(t_buf); }

/* The calling thread's buffer takes it at once, the others at their next flush. */
void exec_trace_clock_set(exec_trace_clock c)
{
    atomic_store(&g_trace_clock, c);
    trace_flush_thread();
}

uint64_t exec_ops_dispatched(void)
{
    pthread_mutex_lock(&g_tbuf_lock);
    uint64_t n = g_tbuf_retired;
    for (const tbuf *b = g_tbufs; b; b = b->next)
        n += atomic_load_explicit(&b->emitted, memory_order_relaxed) + b->n;
    pthread_mutex_unlock(&g_tbuf_lock);
    return n;
}

void exec_trace_run_begin(const exec_run_info *info)
{
    if (__builtin_expect(g_hooks_ptr != NULL, 0) && g_hooks_ptr->run_begin)
        g_hooks_ptr->run_begin(g_hooks_ptr->ctx, info);
}
void exec_trace_run_end(int32_t status)
{
    trace_flush_thread();
    if (__builtin_expect(g_hooks_ptr != NULL, 0) && g_hooks_ptr->run_end)
        g_hooks_ptr->run_end(g_hooks_ptr->ctx, status, exec_ops_dispatched());
}
void exec_trace_step_begin(uint32_t step)
{
    if (__builtin_expect(g_hooks_ptr != NULL, 0) && g_hooks_ptr->step_begin)
        g_hooks_ptr->step_begin(g_hooks_ptr->ctx, step);
}
void exec_trace_step_end(uint32_t step, double loss)
{
    trace_flush_thread();
    if (__builtin_expect(g_hooks_ptr != NULL, 0) && g_hooks_ptr->step_end)
        g_hooks_ptr->step_end(g_hooks_ptr->ctx, step, loss);
}

/* Describes every node of g once per hook epoch, before its first traced run. */
static void trace_node_defs(exec_graph *g, const exec_hooks *h)
{
    uint64_t epoch = atomic_load(&g_hooks_epoch);
    if (g->traced_epoch == epoch && g->traced_node_def == h->node_def && g->traced_ctx == h->ctx)
        return;
    g->traced_epoch = epoch;
    g->traced_node_def = h->node_def;
    g->traced_ctx = h->ctx;
    if (!h->node_def)
        return;
    for (uint32_t j = 0; j < g->nnodes; j++) {
        uint64_t flops = 0, bytes = 0;
        exec_op_table[g->nodes[j].op].cost(g, &g->nodes[j], &flops, &bytes);
        h->node_def(h->ctx, g, &g->nodes[j], flops, bytes);
    }
    if (h->graph_described)
        h->graph_described(h->ctx, g);
}

/* Each worker keeps its scratch in the graph across runs (slot = worker). */
void *exec_kscratch(exec_kctx *k, size_t bytes)
{
    exec_graph *g = k->g;
    int w = k->worker;
    if (bytes <= g->scratch_cap[w])
        return g->scratch[w];
    base_free_aligned(g->scratch[w]);
    g->scratch[w] = base_malloc_aligned(bytes);
    g->scratch_cap[w] = g->scratch[w] ? bytes : 0;
    size_t total = 0;
    for (int i = 0; i < EXEC_MAX_WORKERS; i++)
        total += g->scratch_cap[i];
    if (total > g->peak_workspace)
        g->peak_workspace = total;
    return g->scratch[w];
}

uint64_t exec_kseed(const exec_kctx *k, const exec_node *n)
{
    return exec_splitmix64(k->g->seed ^ exec_splitmix64(k->g->runs * 0x10001ull + n->id));
}

static exec_status exec_dispatch(exec_kctx *k, const exec_node *n);

/* Dispatch, timing the node when the caller asked for per-node times. */
static exec_status dispatch_timed(exec_kctx *k, const exec_node *n, uint64_t *node_ns)
{
    if (!node_ns)
        return exec_dispatch(k, n);
    uint64_t t0 = base_now_ns();
    exec_status s = exec_dispatch(k, n);
    node_ns[n->id] += base_now_ns() - t0;
    return s;
}

/* A traced op: timed into the thread's buffer. */
static exec_status dispatch_traced(exec_kctx *k, const exec_node *n)
{
    tbuf *b = t_buf;
    if (__builtin_expect(!b, 0) && !(b = tbuf_make()))
        return exec_fail(EXEC_ERR_NOMEM, "trace: out of memory for the op buffer");
    if (b->g != k->g || b->hooks != k->hooks) {
        tbuf_flush(b);
        b->g = k->g;
        b->hooks = k->hooks;
    }
    int tsc = b->tsc;
    uint64_t t0 = tsc ? tsc_read() : base_now_ns();
    exec_status s = exec_kernels_now()[n->op](k, n);
    uint64_t t1 = tsc ? tsc_read() : base_now_ns();
    uint32_t i = b->n;
    b->nodes[i] = n->id;
    b->begins[i] = t0;
    b->ends[i] = t1;
    if (++b->n == b->cap)
        tbuf_flush(b);
    return s;
}

/* The one place every node execution goes through. */
static exec_status exec_dispatch(exec_kctx *k, const exec_node *n)
{
    if (__builtin_expect(g_interrupt != 0, 0))
        return exec_fail(EXEC_ERR_INTERRUPTED, "interrupted by signal %d", (int)g_interrupt);
    if (__builtin_expect(k->hooks != NULL, 0))
        return dispatch_traced(k, n);
    return exec_kernels_now()[n->op](k, n);
}

/* ---- dependencies: RAW, WAR and WAW edges in build order ------------- */
static exec_status build_deps(exec_graph *g)
{
    if (g->dep_start && g->dep_nodes == g->nnodes)
        return EXEC_OK;
    base_free(g->order_deps);
    base_free(g->dep_start);
    base_free(g->succ);
    base_free(g->succ_start);
    g->order_deps = g->dep_start = g->succ = g->succ_start = NULL;

    exec_status st = EXEC_OK;
    uint32_t nn = g->nnodes, nt = g->ntensors;
    int64_t *writer = base_malloc(nt * sizeof *writer);
    uint32_t *rstart = base_calloc(nt + 1, sizeof *rstart); /* readers: a linked list per tensor */
    uint32_t nreads = 0;
    for (uint32_t j = 0; j < nn; j++)
        nreads += (uint32_t)g->nodes[j].nin;
    uint32_t *rnode = base_malloc((nreads + 1) * sizeof *rnode);
    uint32_t *rnext = base_malloc((nreads + 1) * sizeof *rnext);
    uint32_t *stamp = base_malloc((nn + 1) * sizeof *stamp);
    uint32_t cap = nreads * 2 + nn + 16, ndeps = 0;
    uint32_t *deps = base_malloc(cap * sizeof *deps);
    uint32_t *dstart = base_malloc((nn + 1) * sizeof *dstart);
    uint32_t *scount = NULL;
    if (!writer || !rstart || !rnode || !rnext || !stamp || !deps || !dstart) {
        st = exec_fail(EXEC_ERR_NOMEM, "executor: out of memory building dependencies");
        goto end;
    }
    for (uint32_t t = 0; t < nt; t++)
        writer[t] = -1;
    for (uint32_t j = 0; j <= nn; j++)
        stamp[j] = UINT32_MAX;
    uint32_t rfree = 1; /* 0 ends a list */

#define ADD_DEP(i)                                                                 \
    do {                                                                           \
        uint32_t d_ = (uint32_t)(i);                                               \
        if (d_ != j && stamp[d_] != j) {                                           \
            stamp[d_] = j;                                                         \
            if (ndeps == cap) {                                                    \
                uint32_t *nd = base_realloc(deps, (size_t)cap * 2 * sizeof *deps); \
                if (!nd) {                                                         \
                    st = exec_fail(EXEC_ERR_NOMEM, "executor: out of memory");     \
                    goto end;                                                      \
                }                                                                  \
                deps = nd;                                                         \
                cap *= 2;                                                          \
            }                                                                      \
            deps[ndeps++] = d_;                                                    \
        }                                                                          \
    } while (0)

    /* by storage: tensors that share a buffer (buffer forwarding) are one */
#define ST(id) (g->tensors[(id)].storage)
    for (uint32_t j = 0; j < nn; j++) {
        const exec_node *n = &g->nodes[j];
        dstart[j] = ndeps;
        for (int i = 0; i < n->nin; i++)
            if (writer[ST(n->in[i])] >= 0)
                ADD_DEP(writer[ST(n->in[i])]);
        for (int o = 0; o < n->nout; o++) {
            uint32_t t = ST(n->out[o]);
            for (uint32_t r = rstart[t]; r; r = rnext[r])
                ADD_DEP(rnode[r]);
            if (writer[t] >= 0)
                ADD_DEP(writer[t]);
            writer[t] = j;
            rstart[t] = 0;
        }
        for (int i = 0; i < n->nin; i++) {
            uint32_t t = ST(n->in[i]);
            int written = 0;
            for (int o = 0; o < n->nout; o++)
                written |= ST(n->out[o]) == t;
            if (!written) {
                rnode[rfree] = j;
                rnext[rfree] = rstart[t];
                rstart[t] = rfree++;
            }
        }
    }
#undef ADD_DEP
#undef ST
    dstart[nn] = ndeps;

    scount = base_calloc(nn + 1, sizeof *scount);
    uint32_t *succ = base_malloc((ndeps + 1) * sizeof *succ);
    if (!scount || !succ) {
        base_free(succ);
        st = exec_fail(EXEC_ERR_NOMEM, "executor: out of memory");
        goto end;
    }
    for (uint32_t e = 0; e < ndeps; e++)
        scount[deps[e] + 1]++;
    for (uint32_t j = 0; j < nn; j++)
        scount[j + 1] += scount[j];
    uint32_t *fill = stamp; /* reuse as cursor */
    for (uint32_t j = 0; j < nn; j++)
        fill[j] = scount[j];
    for (uint32_t j = 0; j < nn; j++)
        for (uint32_t e = dstart[j]; e < dstart[j + 1]; e++)
            succ[fill[deps[e]]++] = j;
    g->order_deps = deps;
    g->dep_start = dstart;
    g->succ = succ;
    g->succ_start = scount;
    g->dep_nodes = nn;
    deps = dstart = scount = NULL;
end:
    base_free(writer);
    base_free(rstart);
    base_free(rnode);
    base_free(rnext);
    base_free(stamp);
    base_free(deps);
    base_free(dstart);
    base_free(scount);
    return st;
}

/* ---- the inter-op scheduler ------------------------------------------- */
typedef struct sched {
    exec_graph *g;
    exec_phase max_phase;
    uint32_t lo, hi; /* the nodes of this run: [lo, hi), phase <= max_phase */
    uint64_t *node_ns;
    int intra;
    exec_conv_algo conv_algo;
    exec_bind bind;
    int workers; /* inter-op workers: worker w binds slots [w * intra, (w + 1) * intra) */
    const exec_hooks *hooks;
    int spin; /* workers spin before they sleep: no more threads than CPUs */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic uint32_t epoch; /* bumped under mu by every change a waiting worker wakes for */
    int sleepers;           /* workers in pthread_cond_wait */
    uint32_t *heap, nheap;  /* ready nodes, min-heap by id */
    uint32_t *indeg;
    uint32_t remaining;
    exec_status status;
} sched;

static void heap_push(sched *s, uint32_t v)
{
    uint32_t i = s->nheap++;
    s->heap[i] = v;
    while (i && s->heap[(i - 1) / 2] > s->heap[i]) {
        uint32_t p = (i - 1) / 2, t = s->heap[p];
        s->heap[p] = s->heap[i];
        s->heap[i] = t;
        i = p;
    }
}

static uint32_t heap_pop(sched *s)
{
    uint32_t top = s->heap[0];
    s->heap[0] = s->heap[--s->nheap];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nheap && s->heap[l] < s->heap[m])
            m = l;
        if (r < s->nheap && s->heap[r] < s->heap[m])
            m = r;
        if (m == i)
            break;
        uint32_t t = s->heap[m];
        s->heap[m] = s->heap[i];
        s->heap[i] = t;
        i = m;
    }
    return top;
}

/* Whether node j runs in a run of [lo, hi) up to max_phase. */
static inline int in_run(const exec_graph *g, uint32_t j, exec_phase max_phase, uint32_t lo, uint32_t hi)
{
    return j >= lo && j < hi && g->nodes[j].phase <= max_phase;
}

/* How long an idle worker spins before it sleeps: an op of a few
 * microseconds ends long before a sleeping thread is woken (tens of
 * microseconds on a VM), and a step of many small ops on two workers paid
 * that at every hand-off. Spinning only where every thread has a CPU. */
#ifndef SCHED_SPIN_NS
#define SCHED_SPIN_NS 100000
#endif

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spins until *v is no longer `seen` or SCHED_SPIN_NS have passed. */
static void spin_while_same(_Atomic uint32_t *v, uint32_t seen)
{
    uint64_t t0 = base_now_ns();
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(v, memory_order_acquire) != seen)
            return;
        cpu_relax();
        if (!(i & 63) && base_now_ns() - t0 > SCHED_SPIN_NS)
            return;
    }
}

/* A change under s->mu that idle workers wait for: the spinning see the
 * epoch move, the sleeping are woken. */
static void sched_wake(sched *s)
{
    atomic_fetch_add_explicit(&s->epoch, 1, memory_order_release);
    if (s->sleepers)
        pthread_cond_broadcast(&s->cv);
}

/* Worker `index`'s share of one run: nodes from the ready queue until none
 * remain or one fails. */
static void run_worker(sched *s, int index)
{
    omp_set_num_threads(s->intra);
    exec_bind_team(s->bind, index * s->intra, s->intra, s->workers * s->intra); /* before the lock: it may fork */
    exec_denormals_team(s->intra);
    pthread_mutex_lock(&s->mu);
    exec_kctx k = { .g = s->g, .nthreads = s->intra, .worker = index, .conv_algo = s->conv_algo, .hooks = s->hooks };
    for (;;) {
        while (s->nheap == 0 && s->remaining && !s->status) {
            uint32_t seen = atomic_load_explicit(&s->epoch, memory_order_relaxed);
            if (s->spin) {
                pthread_mutex_unlock(&s->mu);
                spin_while_same(&s->epoch, seen);
                pthread_mutex_lock(&s->mu);
                if (atomic_load_explicit(&s->epoch, memory_order_relaxed) != seen)
                    continue;
            }
            s->sleepers++;
            pthread_cond_wait(&s->cv, &s->mu);
            s->sleepers--;
        }
        if (!s->remaining || s->status)
            break;
        uint32_t j = heap_pop(s);
        pthread_mutex_unlock(&s->mu);
        const exec_node *n = &s->g->nodes[j];
        exec_status st = dispatch_timed(&k, n, s->node_ns);
        pthread_mutex_lock(&s->mu);
        if (st && !s->status) {
            s->status = st;
            sched_wake(s);
            break;
        }
        s->remaining--;
        for (uint32_t e = s->g->succ_start[j]; e < s->g->succ_start[j + 1]; e++) {
            uint32_t v = s->g->succ[e];
            if (in_run(s->g, v, s->max_phase, s->lo, s->hi) && --s->indeg[v] == 0)
                heap_push(s, v);
        }
        sched_wake(s);
    }
    pthread_mutex_unlock(&s->mu);
    trace_flush_thread(); /* this worker's share of the run is over */
}

/* ---- the inter-op workers: one pool for the process ---------------------
 * The calling thread is worker 0 and the pool's threads workers 1..M-1:
 * every thread of an inter-op run runs ops with its OpenMP team, and no
 * team waits idle beside them. libgomp spins briefly between a team's
 * parallel regions only while the threads that it manages, every team's
 * together, are no more than the CPUs; above that it puts them to sleep
 * after 1000 spins, and every region then pays their wake-ups (7 us a
 * region became 25 on this 2-CPU machine beside one other idle team). A
 * pool per graph kept a team for each graph that ever ran with workers
 * (deepq has three), and a waiting caller kept its own: on a 16-core
 * machine speech's inference at 16 threads took 40 ms a step in a process
 * that kept idle teams of other settings, 21 ms in one that did not. The
 * pool stays from run to run while the number of workers stays;
 * exec_workers_release() ends its threads and their teams. */
typedef struct pool_arg {
    struct exec_pool *pool;
    int index;
    uint32_t gen; /* the pool's at the thread's start: it waits for the next run */
} pool_arg;

typedef struct exec_pool {
    pthread_t tid[EXEC_MAX_WORKERS];
    pool_arg arg[EXEC_MAX_WORKERS];
    int n; /* threads running (workers 1..n) */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    _Atomic uint32_t gen; /* bumped by every run (and the stop) */
    int busy;             /* threads still inside the current run */
    int quit;
    int spin;   /* the last run's: its threads spin a moment for the next */
    sched *run; /* the current run */
} exec_pool;

static exec_pool g_pool = { .mu = PTHREAD_MUTEX_INITIALIZER,
                            .go = PTHREAD_COND_INITIALIZER,
                            .done = PTHREAD_COND_INITIALIZER };
/* held through an inter-op run and a release: one run owns the pool at a time */
static pthread_mutex_t g_pool_owner = PTHREAD_MUTEX_INITIALIZER;

static void *pool_worker(void *arg)
{
    exec_pool *p = ((pool_arg *)arg)->pool;
    int index = ((pool_arg *)arg)->index;
    uint32_t seen = ((pool_arg *)arg)->gen;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->gen == seen && !p->quit && p->spin) { /* a step of small ops: the next run is near */
            pthread_mutex_unlock(&p->mu);
            spin_while_same(&p->gen, seen);
            pthread_mutex_lock(&p->mu);
        }
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        sched *s = p->run;
        pthread_mutex_unlock(&p->mu);
        run_worker(s, index);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Stops and joins the pool's threads; g_pool_owner held. */
static void pool_stop(exec_pool *p)
{
    if (!p->n)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++)
        pthread_join(p->tid[i], NULL);
    p->n = 0, p->quit = 0;
}

void exec_workers_release(void)
{
    pthread_mutex_lock(&g_pool_owner);
    pool_stop(&g_pool);
    pthread_mutex_unlock(&g_pool_owner);
}

/* A child of fork() has none of the pool's threads (and no owner). */
static void pool_forked(void)
{
    pthread_mutex_init(&g_pool_owner, NULL);
    pthread_mutex_init(&g_pool.mu, NULL);
    pthread_cond_init(&g_pool.go, NULL);
    pthread_cond_init(&g_pool.done, NULL);
    g_pool.n = 0, g_pool.busy = 0, g_pool.quit = 0, g_pool.run = NULL;
}
static void pool_atfork(void) { pthread_atfork(NULL, NULL, pool_forked); }

/* The pool with `threads` threads beside the caller (fewer if the system
 * refused some); g_pool_owner held. */
static exec_pool *pool_get(int threads)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, pool_atfork);
    exec_pool *p = &g_pool;
    if (p->n == threads)
        return p;
    pool_stop(p);
    for (; p->n < threads; p->n++) {
        p->arg[p->n] = (pool_arg){ p, p->n + 1, p->gen }; /* gen changes only in a run, which the owner makes */
        if (pthread_create(&p->tid[p->n], NULL, pool_worker, &p->arg[p->n]))
            break;
        char name[32]; /* as top -H, gdb and perf show it (15 characters at most) */
        snprintf(name, sizeof name, "fathom-inter%d", p->n + 1);
        name[15] = 0;
        (void)pthread_setname_np(p->tid[p->n], name);
    }
    return p;
}

static exec_status run_parallel(exec_graph *g, exec_phase max_phase, uint32_t lo, uint32_t hi, int inter,
                                uint64_t *node_ns, const exec_settings *set)
{
    exec_status st = build_deps(g);
    if (st)
        return st;
    sched s = { .g = g,
                .max_phase = max_phase,
                .lo = lo,
                .hi = hi,
                .node_ns = node_ns,
                .conv_algo = (exec_conv_algo)set->conv_algo,
                .bind = (exec_bind)set->bind,
                .hooks = set->hooks };
    s.intra = set->threads / inter;
    if (s.intra < 1)
        s.intra = 1;
    s.heap = base_malloc((g->nnodes + 1) * sizeof *s.heap);
    s.indeg = base_calloc(g->nnodes + 1, sizeof *s.indeg);
    if (!s.heap || !s.indeg) {
        st = exec_fail(EXEC_ERR_NOMEM, "executor: out of memory");
        goto end;
    }
    for (uint32_t j = lo; j < hi; j++) {
        if (g->nodes[j].phase > max_phase)
            continue;
        s.remaining++;
        for (uint32_t e = g->dep_start[j]; e < g->dep_start[j + 1]; e++)
            if (in_run(g, g->order_deps[e], max_phase, lo, hi))
                s.indeg[j]++;
        if (!s.indeg[j])
            heap_push(&s, j);
    }
    pthread_mutex_lock(&g_pool_owner);
    exec_pool *p = pool_get(inter - 1);
    s.workers = p->n + 1;
    s.spin = s.workers * s.intra <= exec_cpus();
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    pthread_mutex_lock(&p->mu);
    p->run = &s;
    p->busy = p->n;
    p->spin = s.spin;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    int was = omp_get_max_threads(); /* worker 0 sets its own team's size: restored */
    run_worker(&s, 0);
    omp_set_num_threads(was);
    pthread_mutex_lock(&p->mu);
    while (p->busy)
        pthread_cond_wait(&p->done, &p->mu);
    p->run = NULL;
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&g_pool_owner);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.cv);
    st = s.status;
end:
    base_free(s.heap);
    base_free(s.indeg);
    return st;
}

/* Wall time spent inside exec_graph_run, every graph of the process. */
static _Atomic uint64_t g_engine_ns;

uint64_t exec_engine_ns(void) { return atomic_load_explicit(&g_engine_ns, memory_order_relaxed); }

static exec_status graph_run(exec_graph *g, const exec_run_opts *opts);

void exec_graph_settings_set(exec_graph *g, const exec_settings *s) { g->settings = s ? *s : (exec_settings){ 0 }; }

exec_settings exec_graph_settings(const exec_graph *g) { return g->settings; }

/* The settings in force for one run: the run's, else the graph's, else the
 * process's (threads resolved to a count; the algorithm may stay DEFAULT,
 * which the kernels read as the process's at the op). */
static exec_settings settings_of_run(const exec_graph *g, const exec_run_opts *opts)
{
    exec_settings r = g->settings;
    const exec_settings *o = opts ? opts->settings : NULL;
    if (o && o->threads > 0)
        r.threads = o->threads;
    if (o && o->conv_algo != EXEC_CONV_DEFAULT)
        r.conv_algo = o->conv_algo;
    if (o && o->hooks)
        r.hooks = o->hooks;
    if (o && o->bind != EXEC_BIND_DEFAULT)
        r.bind = o->bind;
    if (r.bind == EXEC_BIND_DEFAULT)
        r.bind = exec_bind_get();
    if (!r.hooks)
        r.hooks = g_hooks_ptr;
    if (r.hooks && !r.hooks->node_def && !r.hooks->ops)
        r.hooks = NULL; /* a set that sees no op: the run goes untimed */
    if (r.threads <= 0)
        r.threads = exec_threads_get();
    return r;
}

exec_status exec_graph_run(exec_graph *g, const exec_run_opts *opts)
{
    uint64_t t0 = base_now_ns();
    exec_status st = graph_run(g, opts);
    atomic_fetch_add_explicit(&g_engine_ns, base_now_ns() - t0, memory_order_relaxed);
    return st;
}

static exec_status graph_run(exec_graph *g, const exec_run_opts *opts)
{
    if (g->status)
        return g->status;
    if (!g->planned)
        return exec_fail(EXEC_ERR_STATE, "run: graph not planned");
    exec_phase max_phase = opts ? opts->max_phase : EXEC_PHASE_update;
    uint32_t lo = opts ? opts->first_node : 0, hi = opts && opts->end_node ? opts->end_node : g->nnodes;
    if (hi > g->nnodes || lo > hi)
        return exec_fail(EXEC_ERR_ARG, "run: nodes [%u, %u) outside the graph's %u", lo, hi, g->nnodes);
    int inter = opts && opts->inter > 1 ? opts->inter : 1;
    if (inter > EXEC_MAX_WORKERS)
        inter = EXEC_MAX_WORKERS;
    exec_settings set = settings_of_run(g, opts);
    if (__builtin_expect(set.hooks != NULL, 0))
        trace_node_defs(g, set.hooks);
    exec_status st = EXEC_OK;
    uint64_t ran = 0;
    if (inter > 1) {
        st = run_parallel(g, max_phase, lo, hi, inter, opts->node_ns, &set);
        for (uint32_t j = lo; j < hi; j++)
            ran += g->nodes[j].phase <= max_phase;
    } else {
        /* OpenBLAS (its OpenMP build) follows the calling thread's OpenMP
         * thread count: this run's, restored afterwards */
        int was = omp_get_max_threads();
        bool own =
            (g->settings.threads > 0 || (opts && opts->settings && opts->settings->threads > 0)) && was != set.threads;
        if (own)
            omp_set_num_threads(set.threads);
        exec_bind_team((exec_bind)set.bind, 0, set.threads, set.threads);
        exec_denormals_team(set.threads);
        exec_kctx k = {
            .g = g, .nthreads = set.threads, .conv_algo = (exec_conv_algo)set.conv_algo, .hooks = set.hooks
        };
        for (uint32_t j = lo; j < hi && !st; j++) {
            if (g->nodes[j].phase > max_phase)
                continue;
            st = dispatch_timed(&k, &g->nodes[j], opts ? opts->node_ns : NULL);
            ran++;
        }
        if (own)
            omp_set_num_threads(was);
        trace_flush_thread();
    }
    if (!st) {
        g->ops_run += ran;
        g->runs++;
    }
    return st;
}

uint64_t exec_graph_ops_run(const exec_graph *g) { return g->ops_run; }
