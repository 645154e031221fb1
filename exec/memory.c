/* memory.c -- planning: one arena per role, exact accounting, weight init. */
#include "internal.h"
#include "rng.h"

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

exec_status exec_graph_plan(exec_graph *g)
{
    if (g->status)
        return g->status;
    if (g->planned)
        return exec_fail(EXEC_ERR_STATE, "graph: already planned");
    size_t need[EXEC_ROLE_COUNT] = { 0 };
    for (uint32_t id = 1; id < g->ntensors; id++)
        need[g->tensors[id].role] += align_up(g->tensors[id].bytes);
    for (int r = 0; r < EXEC_ROLE_COUNT; r++) {
        if (!need[r])
            continue;
        g->arena[r] = exec_malloc_aligned(need[r]);
        if (!g->arena[r]) {
            size_t want = need[r];
            for (int q = 0; q < r; q++) {
                exec_free_aligned(g->arena[q]);
                g->arena[q] = NULL;
                g->arena_bytes[q] = 0;
            }
            return exec_fail(EXEC_ERR_NOMEM, "plan: cannot allocate %zu bytes for the %s arena", want,
                             exec_role_name((exec_role)r));
        }
        g->arena_bytes[r] = need[r];
    }
    size_t off[EXEC_ROLE_COUNT] = { 0 };
    const exec_hooks *h = exec_hooks_cur();
    for (uint32_t id = 1; id < g->ntensors; id++) {
        exec_tensor *t = &g->tensors[id];
        t->data = (char *)g->arena[t->role] + off[t->role];
        off[t->role] += align_up(t->bytes);
        init_tensor(g, t);
        if (h && h->tensor_alloc)
            h->tensor_alloc(h->ctx, g, t);
    }
    g->planned = true;
    return EXEC_OK;
}

void exec_memory_release(exec_graph *g)
{
    const exec_hooks *h = exec_hooks_cur();
    if (g->planned && h && h->tensor_free)
        for (uint32_t id = 1; id < g->ntensors; id++)
            h->tensor_free(h->ctx, g, &g->tensors[id]);
    for (int w = 0; w < EXEC_MAX_WORKERS; w++) {
        exec_free_aligned(g->scratch[w]);
        g->scratch[w] = NULL;
        g->scratch_cap[w] = 0;
    }
    for (int r = 0; r < EXEC_ROLE_COUNT; r++) {
        exec_free_aligned(g->arena[r]);
        g->arena[r] = NULL;
        g->arena_bytes[r] = 0;
    }
    g->planned = false;
}

void exec_graph_mem(const exec_graph *g, exec_mem_stats *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t id = 1; id < g->ntensors; id++)
        out->bytes[g->tensors[id].role] += g->tensors[id].bytes;
    for (int r = 0; r < EXEC_ROLE_COUNT; r++)
        out->arena[r] = g->arena_bytes[r];
    out->peak_workspace = g->peak_workspace;
    out->bytes[EXEC_ROLE_workspace] += g->peak_workspace;
}
