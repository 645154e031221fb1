/* plan.c -- planning: one arena per role, exact accounting, weight init;
 * tensor versions and the kernels' derived data kept across runs. */
#include "internal.h"
#include "rng.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic uint64_t version_clock;
uint64_t exec_version_next(void) { return atomic_fetch_add_explicit(&version_clock, 1, memory_order_relaxed) + 1; }

#define ALIGN 64
static size_t align_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

static void init_tensor(exec_graph *g, exec_tensor *t)
{
    uint8_t kind = g->init[t->id];
    if (!kind) {
        memset(t->data, 0, t->bytes);
        return;
    }
    exec_init init = (exec_init)(kind - 1);
    float *p = t->data;
    exec_rng r = exec_rng_make(g->seed * 1000003ull + t->id);
    /* fan-in and fan-out: matrices [in, out]; filters [oc, c, kh, kw] */
    int64_t fan_in = 1, fan_out = 1;
    if (t->ndim == 2) {
        fan_in = t->shape[0];
        fan_out = t->shape[1];
    } else if (t->ndim == 4) {
        fan_in = t->shape[1] * t->shape[2] * t->shape[3];
        fan_out = t->shape[0] * t->shape[2] * t->shape[3];
    } else if (t->ndim >= 1) {
        fan_in = fan_out = t->shape[t->ndim - 1];
    }
    float scale = g->init_scale[t->id];
    for (int64_t i = 0; i < t->numel; i++) {
        float v;
        switch (init) {
        case EXEC_INIT_ZERO: v = g->init_value[t->id]; break;
        case EXEC_INIT_ONE: v = 1.0f; break;
        case EXEC_INIT_GLOROT:
            v = (2.0f * exec_rng_uniform(&r) - 1.0f) * sqrtf(6.0f / (float)(fan_in + fan_out));
            break;
        case EXEC_INIT_HE: v = exec_rng_normal(&r) * sqrtf(2.0f / (float)fan_in); break;
        case EXEC_INIT_NORMAL: v = exec_rng_normal(&r) * (scale > 0 ? scale : 0.01f); break;
        case EXEC_INIT_UNIFORM: v = (2.0f * exec_rng_uniform(&r) - 1.0f) * (scale > 0 ? scale : 0.05f); break;
        default: v = 0; break;
        }
        p[i] = v;
    }
}

const char *exec_bytes_text(char *buf, size_t n, double bytes)
{
    if (bytes >= 0x1p30)
        snprintf(buf, n, "%.2f GiB", bytes / 0x1p30);
    else if (bytes >= 0x1p20)
        snprintf(buf, n, "%.1f MiB", bytes / 0x1p20);
    else
        snprintf(buf, n, "%.1f KiB", bytes / 0x1p10);
    return buf;
}

exec_status exec_graph_plan(exec_graph *g)
{
    if (g->status)
        return g->status;
    if (g->planned)
        return exec_fail(EXEC_ERR_STATE, "graph: already planned");
    exec_status fs = exec_plan_forwarding(g);
    if (!fs && g->reuse)
        fs = exec_plan_lifetimes(g, align_up);
    if (fs)
        return fs;
    /* a storage's buffer: its largest tensor's bytes (the one it holds at
     * a time, where lifetimes share it) */
    size_t *size = base_calloc(g->ntensors ? g->ntensors : 1, sizeof *size);
    if (!size)
        return exec_fail(EXEC_ERR_NOMEM, "plan: out of memory");
    for (uint32_t id = 1; id < g->ntensors; id++) {
        size_t b = align_up(g->tensors[id].bytes), *s = &size[g->tensors[id].storage];
        if (b > *s)
            *s = b;
    }
    size_t need[EXEC_ROLE_COUNT] = { 0 }, total = 0;
    for (uint32_t id = 1; id < g->ntensors; id++)
        if (g->tensors[id].storage == id) {
            need[g->tensors[id].role] += size[id];
            total += size[id];
        }
    const char *source = NULL;
    const double limit = exec_memory_limit(&source);
    if (limit > 0 && (double)total > limit) {
        char a[32], b[32];
        base_free(size);
        return exec_fail(EXEC_ERR_NOMEM,
                         "plan: the tensors need %s, more than the process's memory limit of %s (%s): a smaller batch "
                         "or preset may fit",
                         exec_bytes_text(a, sizeof a, (double)total), exec_bytes_text(b, sizeof b, limit), source);
    }
    for (int r = 0; r < EXEC_ROLE_COUNT; r++) {
        if (!need[r])
            continue;
        g->arena[r] = base_malloc_aligned(need[r]);
        if (!g->arena[r]) {
            size_t want = need[r];
            for (int q = 0; q < r; q++) {
                base_free_aligned(g->arena[q]);
                g->arena[q] = NULL;
                g->arena_bytes[q] = 0;
            }
            base_free(size);
            return exec_fail(EXEC_ERR_NOMEM, "plan: cannot allocate %zu bytes for the %s arena", want,
                             exec_role_name((exec_role)r));
        }
        g->arena_bytes[r] = need[r];
    }
    size_t off[EXEC_ROLE_COUNT] = { 0 };
    const exec_hooks *h = exec_hooks_cur();
    for (uint32_t id = 1; id < g->ntensors; id++) {
        exec_tensor *t = &g->tensors[id];
        if (t->storage == id) {
            t->data = (char *)g->arena[t->role] + off[t->role];
            off[t->role] += size[id];
        }
    }
    base_free(size);
    for (uint32_t id = 1; id < g->ntensors; id++) {
        exec_tensor *t = &g->tensors[id];
        if (t->storage != id) /* a forwarded output: its group's buffer */
            t->data = g->tensors[t->storage].data;
        init_tensor(g, t);
        t->version = exec_version_next();
        if (h && h->tensor_alloc)
            h->tensor_alloc(h->ctx, g, t);
    }
    g->planned = true;
    return EXEC_OK;
}

/* ---- derived data kept across runs -------------------------------------- */

/* One buffer derived from a tensor, shared by the nodes that ask for the
 * same (from, op, how, bytes): an unrolled recurrent net's MatMuls of one
 * weight, one packing for all of them. */
struct exec_kcache {
    void *buf;
    size_t bytes;
    uint64_t version; /* of the tensor it holds (0: none yet) */
    uint32_t from, how, users;
    uint16_t op;
    bool filling; /* a node fills it now: the others work without it */
};

static void kcache_release(exec_graph *g)
{
    for (uint32_t i = 0; i < g->kcache_n; i++)
        base_free_aligned(g->kcache[i].buf);
    base_free(g->kcache);
    base_free(g->kcache_at);
    base_free(g->written);
    g->kcache = NULL;
    g->kcache_at = NULL;
    g->written = NULL;
    g->kcache_n = g->kcache_cap = 0;
    g->kcache_nodes = 0;
    g->kcache_bytes = 0;
}

/* kcache_at and written sized to the graph's nodes and tensors (again if
 * nodes were added since: they may write what was kept), under kcache_lock */
static bool kcache_ready(exec_graph *g)
{
    if (g->kcache_at && g->kcache_nodes == g->nnodes)
        return true;
    kcache_release(g);
    g->kcache_at = base_calloc(g->nnodes ? g->nnodes : 1, sizeof *g->kcache_at);
    g->written = base_calloc(g->ntensors ? g->ntensors : 1, sizeof *g->written);
    if (!g->kcache_at || !g->written) {
        kcache_release(g);
        return false;
    }
    for (uint32_t i = 0; i < g->nnodes; i++)
        for (int o = 0; o < g->nodes[i].nout; o++)
            g->written[g->nodes[i].out[o]] = 1;
    g->kcache_nodes = g->nnodes;
    return true;
}

/* node `id` lets go of its entry; the last user frees the buffer (the
 * entry stays, empty, for the next that asks) */
static void kcache_unuse(exec_graph *g, uint32_t id)
{
    const uint32_t e = g->kcache_at[id];
    if (!e)
        return;
    struct exec_kcache *c = &g->kcache[e - 1];
    g->kcache_at[id] = 0;
    if (--c->users)
        return;
    base_free_aligned(c->buf);
    g->kcache_bytes -= c->bytes;
    *c = (struct exec_kcache){ 0 };
}

/* whether c is in use for (from, op, how, bytes) */
static bool kcache_is(const struct exec_kcache *c, uint32_t from, uint16_t op, uint32_t how, size_t bytes)
{
    return c->users && c->from == from && c->op == op && c->how == how && c->bytes == bytes;
}

/* the entry of (from, op, how, bytes), made (with its buffer) where none
 * is; -1 where memory runs out */
static int64_t kcache_entry(exec_graph *g, uint32_t from, uint16_t op, uint32_t how, size_t bytes)
{
    int64_t free_at = -1;
    for (uint32_t i = 0; i < g->kcache_n; i++) {
        const struct exec_kcache *c = &g->kcache[i];
        if (kcache_is(c, from, op, how, bytes))
            return i;
        if (!c->users && free_at < 0)
            free_at = i;
    }
    if (free_at < 0) {
        if (g->kcache_n == g->kcache_cap) {
            uint32_t cap = g->kcache_cap ? 2 * g->kcache_cap : 16;
            struct exec_kcache *m = base_realloc(g->kcache, cap * sizeof *m);
            if (!m)
                return -1;
            g->kcache = m;
            g->kcache_cap = cap;
        }
        free_at = g->kcache_n++;
        g->kcache[free_at] = (struct exec_kcache){ 0 };
    }
    struct exec_kcache *c = &g->kcache[free_at];
    if (!(c->buf = base_malloc_aligned(bytes)))
        return -1;
    c->bytes = bytes, c->from = from, c->op = op, c->how = how;
    g->kcache_bytes += bytes;
    return free_at;
}

static pthread_mutex_t kcache_lock = PTHREAD_MUTEX_INITIALIZER;

void *exec_kcache(exec_kctx *k, const exec_node *n, uint32_t from, uint32_t how, size_t bytes, bool *fresh)
{
    exec_graph *g = k->g;
    void *r = NULL;
    *fresh = false;
    if (!from || from >= g->ntensors || n->id >= g->nnodes || !bytes)
        return NULL;
    pthread_mutex_lock(&kcache_lock);
    if (!kcache_ready(g) || g->written[from])
        goto end;
    const uint16_t op = (uint16_t)n->op;
    uint32_t e = g->kcache_at[n->id];
    if (!e || !kcache_is(&g->kcache[e - 1], from, op, how, bytes)) {
        kcache_unuse(g, n->id);
        const int64_t i = kcache_entry(g, from, op, how, bytes);
        if (i < 0)
            goto end;
        g->kcache[i].users++;
        g->kcache_at[n->id] = e = (uint32_t)i + 1;
    }
    struct exec_kcache *c = &g->kcache[e - 1];
    if (c->filling) /* another node makes it now: this run goes without */
        goto end;
    const uint64_t v = g->tensors[from].version;
    *fresh = c->version == v;
    if (!*fresh) {
        c->filling = true;
        c->version = v;
    }
    r = c->buf;
end:
    pthread_mutex_unlock(&kcache_lock);
    return r;
}

void exec_kcache_filled(exec_kctx *k, const exec_node *n, bool ok)
{
    exec_graph *g = k->g;
    pthread_mutex_lock(&kcache_lock);
    if (g->kcache_at && n->id < g->kcache_nodes && g->kcache_at[n->id]) {
        struct exec_kcache *c = &g->kcache[g->kcache_at[n->id] - 1];
        c->filling = false;
        if (!ok)
            c->version = 0;
    }
    pthread_mutex_unlock(&kcache_lock);
}

bool exec_kcache_keeps(exec_kctx *k, uint32_t from)
{
    exec_graph *g = k->g;
    if (!from || from >= g->ntensors)
        return false;
    pthread_mutex_lock(&kcache_lock);
    const bool r = kcache_ready(g) && !g->written[from];
    pthread_mutex_unlock(&kcache_lock);
    return r;
}

void exec_kcache_drop(exec_kctx *k, const exec_node *n)
{
    exec_graph *g = k->g;
    pthread_mutex_lock(&kcache_lock);
    if (g->kcache_at && n->id < g->kcache_nodes)
        kcache_unuse(g, n->id);
    pthread_mutex_unlock(&kcache_lock);
}

void exec_memory_release(exec_graph *g)
{
    const exec_hooks *h = exec_hooks_cur();
    if (g->planned && h && h->tensor_free)
        for (uint32_t id = 1; id < g->ntensors; id++)
            h->tensor_free(h->ctx, g, &g->tensors[id]);
    for (int w = 0; w < EXEC_MAX_WORKERS; w++) {
        base_free_aligned(g->scratch[w]);
        g->scratch[w] = NULL;
        g->scratch_cap[w] = 0;
    }
    for (int r = 0; r < EXEC_ROLE_COUNT; r++) {
        base_free_aligned(g->arena[r]);
        g->arena[r] = NULL;
        g->arena_bytes[r] = 0;
    }
    kcache_release(g);
    g->planned = false;
}

const void *exec_graph_arena(const exec_graph *g, exec_role r, size_t *bytes)
{
    const int ok = (unsigned)r < EXEC_ROLE_COUNT && g->arena[r];
    *bytes = ok ? g->arena_bytes[r] : 0;
    return ok ? g->arena[r] : NULL;
}

void exec_graph_mem(const exec_graph *g, exec_mem_stats *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t id = 1; id < g->ntensors; id++)
        out->bytes[g->tensors[id].role] += g->tensors[id].bytes;
    for (int r = 0; r < EXEC_ROLE_COUNT; r++)
        out->arena[r] = g->arena_bytes[r];
    out->peak_workspace = g->peak_workspace + g->kcache_bytes;
    out->bytes[EXEC_ROLE_workspace] += out->peak_workspace;
}
