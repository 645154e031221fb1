/* import_map.c -- the op table of `fathom import` (import_ops.def): class,
 * engine op and FLOP/byte formula of each framework op name. */
#include "analyze/import.h"

#include <stdlib.h>
#include <string.h>

static const char *const class_names[ANALYZE_IMPORT_CLASS_COUNT] = {
    "elementwise", "matrix", "reduction", "convolution", "random", "optimization", "data_movement", "other",
};

const char *analyze_import_class_name(analyze_import_class c)
{
    return (unsigned)c < ANALYZE_IMPORT_CLASS_COUNT ? class_names[c] : "?";
}

#define elementwise ANALYZE_IMPORT_ELEMENTWISE
#define matrix ANALYZE_IMPORT_MATRIX
#define reduction ANALYZE_IMPORT_REDUCTION
#define convolution ANALYZE_IMPORT_CONVOLUTION
#define random ANALYZE_IMPORT_RANDOM
#define optimization ANALYZE_IMPORT_OPTIMIZATION
#define data_movement ANALYZE_IMPORT_DATA_MOVEMENT
static const analyze_import_op table[] = {
#define X(name, cls, engine, cost, attrs) \
    { name, cls, engine, ANALYZE_IMPORT_COST_##cost, ANALYZE_IMPORT_ATTRS_##attrs },
#include "tracer/import_ops.def"
#undef X
};
#undef elementwise
#undef matrix
#undef reduction
#undef convolution
#undef random
#undef optimization
#undef data_movement

#define NOPS (sizeof table / sizeof table[0])

/* The fused pair ("A,B") of the table engine op e (len bytes of it) is part of, or NULL. */
static const char *fused_pair(const char *e, size_t len)
{
    for (size_t i = 0; i < analyze_import_op_count(); i++) {
        const char *eng = analyze_import_op_at(i)->engine, *comma = strchr(eng, ',');
        if (!comma)
            continue;
        size_t l1 = (size_t)(comma - eng);
        if ((l1 == len && strncmp(eng, e, len) == 0) || (strlen(comma + 1) == len && strncmp(comma + 1, e, len) == 0))
            return eng;
    }
    return NULL;
}

const char *analyze_import_diff_label(const char *name, int framework)
{
    const char *eng = name;
    if (framework) {
        const analyze_import_op *op = analyze_import_lookup(name);
        if (!op || !op->engine[0])
            return name;
        eng = op->engine;
        if (strchr(eng, ','))
            return eng;
    }
    const char *pair = fused_pair(eng, strlen(eng));
    return pair ? pair : eng;
}

size_t analyze_import_op_count(void) { return NOPS; }
const analyze_import_op *analyze_import_op_at(size_t i) { return i < NOPS ? &table[i] : NULL; }

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const analyze_import_op *const *)a)->name, (*(const analyze_import_op *const *)b)->name);
}

/* A sorted index of the table, built on first use; binary search. */
static const analyze_import_op *sorted[NOPS];
static int sorted_ready;

const analyze_import_op *analyze_import_lookup(const char *name)
{
    if (!name)
        return NULL;
    if (!sorted_ready) { /* idempotent: racing initializers write the same array */
        for (size_t i = 0; i < NOPS; i++)
            sorted[i] = &table[i];
        qsort(sorted, NOPS, sizeof sorted[0], by_name);
        sorted_ready = 1;
    }
    analyze_import_op key = { .name = name };
    const analyze_import_op *k = &key;
    const analyze_import_op *const *hit = bsearch(&k, sorted, NOPS, sizeof sorted[0], by_name);
    return hit ? *hit : NULL;
}

static int has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

analyze_import_class analyze_import_kernel_class(const char *name)
{
    if (!name)
        return ANALYZE_IMPORT_OTHER;
    if (has(name, "Memcpy") || has(name, "memcpy") || has(name, "Memset") || has(name, "memset"))
        return ANALYZE_IMPORT_DATA_MOVEMENT;
    if (has(name, "conv") || has(name, "Conv") || has(name, "wgrad") || has(name, "dgrad") ||
        has(name, "implicit_gemm") || has(name, "winograd"))
        return ANALYZE_IMPORT_CONVOLUTION;
    if (has(name, "gemm") || has(name, "Gemm") || has(name, "GEMM") || has(name, "cutlass") || has(name, "_mma"))
        return ANALYZE_IMPORT_MATRIX;
    if (has(name, "reduce") || has(name, "Reduce") || has(name, "softmax") || has(name, "norm") || has(name, "pool"))
        return ANALYZE_IMPORT_REDUCTION;
    if (has(name, "elementwise") || has(name, "Elementwise"))
        return ANALYZE_IMPORT_ELEMENTWISE;
    if (has(name, "adam") || has(name, "Adam") || has(name, "sgd") || has(name, "multi_tensor_apply"))
        return ANALYZE_IMPORT_OPTIMIZATION;
    return ANALYZE_IMPORT_OTHER;
}

/* ---- formulas ------------------------------------------------------------ */

static uint64_t numel(const analyze_import_arg *a, size_t n, size_t i) { return i < n ? a[i].numel : 0; }

/* dim i of argument k counted from the end when i < 0; 0 if unknown */
static uint64_t dim(const analyze_import_arg *a, size_t n, size_t k, int i)
{
    if (k >= n || a[k].is_list)
        return 0;
    int j = i < 0 ? a[k].ndim + i : i;
    return j >= 0 && j < a[k].ndim && a[k].d[j] > 0 ? (uint64_t)a[k].d[j] : 0;
}

static uint64_t sum_numel(const analyze_import_arg *a, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i].numel;
    return s;
}

static uint64_t max_numel(const analyze_import_arg *a, size_t n)
{
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i].numel > m)
            m = a[i].numel;
    return m;
}

/* 2*M*N*K matrix products: a[M,K] (rows ra, inner k), b[K,N] */
static void gemm(uint64_t batch, uint64_t m, uint64_t k, uint64_t n, uint64_t extra_in, uint32_t es, uint64_t *flops,
                 uint64_t *bytes)
{
    *flops = 2 * batch * m * n * k;
    *bytes = (batch * (m * k + k * n + m * n) + extra_in) * es;
}

/* the spatial size of an image argument (dims after N and C) */
static uint64_t spatial(const analyze_import_arg *a)
{
    if (a->is_list || a->ndim < 3)
        return 0;
    uint64_t s = 1;
    for (int i = 2; i < a->ndim; i++)
        s *= a->d[i] > 0 ? (uint64_t)a->d[i] : 0;
    return s;
}

void analyze_import_cost_of(analyze_import_cost cost, const analyze_import_arg *in, size_t nin,
                            const analyze_import_arg *out, size_t nout, uint32_t es, uint64_t *flops, uint64_t *bytes)
{
    uint64_t f = 0, b = 0, o = sum_numel(out, nout), big = max_numel(in, nin);
    switch (cost) {
    case ANALYZE_IMPORT_COST_NONE: break;
    case ANALYZE_IMPORT_COST_IO: b = (sum_numel(in, nin) + o) * es; break;
    case ANALYZE_IMPORT_COST_COPY: b = 2 * numel(in, nin, 0) * es; break;
    case ANALYZE_IMPORT_COST_OUT: b = numel(in, nin, 0) * es; break;
    case ANALYZE_IMPORT_COST_ELEM1:
    case ANALYZE_IMPORT_COST_ELEM4:
    case ANALYZE_IMPORT_COST_ELEM8: {
        uint64_t e = o ? o : big;
        f = e * (cost == ANALYZE_IMPORT_COST_ELEM1 ? 1 : cost == ANALYZE_IMPORT_COST_ELEM4 ? 4 : 8);
        b = (sum_numel(in, nin) + e) * es;
        break;
    }
    case ANALYZE_IMPORT_COST_SOFTMAX:
        f = 5 * numel(in, nin, 0);
        b = (sum_numel(in, nin) + (o ? o : numel(in, nin, 0))) * es;
        break;
    case ANALYZE_IMPORT_COST_REDUCE:
    case ANALYZE_IMPORT_COST_POOL:
        f = numel(in, nin, 0);
        b = (sum_numel(in, nin) + o) * es;
        break;
    case ANALYZE_IMPORT_COST_NORM:
        f = 6 * numel(in, nin, 0);
        b = (sum_numel(in, nin) + (o ? o : numel(in, nin, 0))) * es;
        break;
    case ANALYZE_IMPORT_COST_NORM_BWD:
    case ANALYZE_IMPORT_COST_NORM_BWD_XF:
        f = 9 * numel(in, nin, 0);
        b = (sum_numel(in, nin) + (o ? o : numel(in, nin, 0))) * es;
        break;
    case ANALYZE_IMPORT_COST_MM:
        gemm(1, dim(in, nin, 0, 0), dim(in, nin, 0, 1), dim(in, nin, 1, 1), 0, es, &f, &b);
        break;
    case ANALYZE_IMPORT_COST_ADDMM:
        gemm(1, dim(in, nin, 1, 0), dim(in, nin, 1, 1), dim(in, nin, 2, 1), numel(in, nin, 0), es, &f, &b);
        f += dim(in, nin, 1, 0) * dim(in, nin, 2, 1);
        break;
    case ANALYZE_IMPORT_COST_MATMUL: {
        uint64_t k = dim(in, nin, 0, -1), m = nin && in[0].ndim >= 2 ? dim(in, nin, 0, -2) : 1;
        uint64_t n = nin > 1 && in[1].ndim >= 2 ? dim(in, nin, 1, -1) : 1;
        uint64_t batch = m && k ? numel(in, nin, 0) / (m * k) : 0;
        uint64_t bb = n && k ? numel(in, nin, 1) / (n * k) : 0;
        if (bb > batch)
            batch = bb;
        gemm(batch, m, k, n, 0, es, &f, &b);
        break;
    }
    case ANALYZE_IMPORT_COST_LINEAR: {
        uint64_t k = dim(in, nin, 0, -1), n = dim(in, nin, 1, 0);
        uint64_t rows = k ? numel(in, nin, 0) / k : 0;
        f = 2 * rows * k * n + (numel(in, nin, 2) ? rows * n : 0);
        b = (numel(in, nin, 0) + numel(in, nin, 1) + numel(in, nin, 2) + rows * n) * es;
        break;
    }
    case ANALYZE_IMPORT_COST_BMM:
        gemm(dim(in, nin, 0, 0), dim(in, nin, 0, 1), dim(in, nin, 0, 2), dim(in, nin, 1, 2), 0, es, &f, &b);
        break;
    case ANALYZE_IMPORT_COST_BADDBMM:
        gemm(dim(in, nin, 1, 0), dim(in, nin, 1, 1), dim(in, nin, 1, 2), dim(in, nin, 2, 2), numel(in, nin, 0), es, &f,
             &b);
        break;
    case ANALYZE_IMPORT_COST_ADDMV:
        gemm(1, dim(in, nin, 1, 0), dim(in, nin, 1, 1), 1, numel(in, nin, 0), es, &f, &b);
        break;
    case ANALYZE_IMPORT_COST_MV: gemm(1, dim(in, nin, 0, 0), dim(in, nin, 0, 1), 1, 0, es, &f, &b); break;
    case ANALYZE_IMPORT_COST_DOT:
        f = 2 * numel(in, nin, 0);
        b = (numel(in, nin, 0) + numel(in, nin, 1) + 1) * es;
        break;
    case ANALYZE_IMPORT_COST_CONV: {
        if (nin < 2)
            break;
        uint64_t oc = dim(in, nin, 1, 0), n = dim(in, nin, 0, 0);
        uint64_t os = nout && out[0].ndim == in[0].ndim ? spatial(&out[0]) : spatial(&in[0]);
        f = 2 * n * os * numel(in, nin, 1);
        b = (numel(in, nin, 0) + numel(in, nin, 1) + numel(in, nin, 2) + n * oc * os) * es;
        break;
    }
    case ANALYZE_IMPORT_COST_CONV_BWD:
        if (nin < 3)
            break;
        f = 2 * 2 * dim(in, nin, 0, 0) * spatial(&in[0]) * numel(in, nin, 2);
        b = (numel(in, nin, 0) + 2 * numel(in, nin, 1) + 2 * numel(in, nin, 2)) * es;
        break;
    case ANALYZE_IMPORT_COST_LSTM:
    case ANALYZE_IMPORT_COST_GRU:
    case ANALYZE_IMPORT_COST_RNN: {
        /* x[T,B,I] (or [B,T,I]); hx: [L*D,B,H] (a list for the LSTM) */
        uint64_t g = cost == ANALYZE_IMPORT_COST_LSTM ? 4 : cost == ANALYZE_IMPORT_COST_GRU ? 3 : 1;
        uint64_t i = dim(in, nin, 0, -1), tb = i ? numel(in, nin, 0) / i : 0;
        uint64_t l = 0, h = 0;
        if (nin > 1 && in[1].ndim == 3 && in[1].d[0] > 0 && in[1].d[2] > 0)
            l = (uint64_t)in[1].d[0], h = (uint64_t)in[1].d[2];
        if (!l || !h)
            break;
        uint64_t w = g * h * (i + h) + (l - 1) * g * h * (2 * h);
        f = 2 * tb * w;
        b = (numel(in, nin, 0) + w + tb * h) * es;
        break;
    }
    case ANALYZE_IMPORT_COST_LSTM_CELL:
    case ANALYZE_IMPORT_COST_GRU_CELL: {
        uint64_t g = cost == ANALYZE_IMPORT_COST_LSTM_CELL ? 4 : 3;
        uint64_t bsz = dim(in, nin, 0, 0), i = dim(in, nin, 0, 1), h = nin > 2 ? dim(in, nin, 2, 0) / g : 0;
        f = 2 * bsz * g * h * (i + h);
        b = (numel(in, nin, 0) + g * h * (i + h) + 3 * bsz * h) * es;
        break;
    }
    case ANALYZE_IMPORT_COST_EMBED: {
        uint64_t d = dim(in, nin, 0, 1), idx = numel(in, nin, 1);
        b = (2 * idx * d + idx) * es;
        break;
    }
    case ANALYZE_IMPORT_COST_EMBED_BWD: { /* grad[..., D] added into rows of the weight */
        uint64_t d = dim(in, nin, 0, -1), idx = numel(in, nin, 1);
        f = idx * d;
        b = (2 * idx * d + idx) * es;
        break;
    }
    case ANALYZE_IMPORT_COST_INDEX: b = (2 * (o ? o : numel(in, nin, 1)) + numel(in, nin, 1)) * es; break;
    case ANALYZE_IMPORT_COST_ATTN:
    case ANALYZE_IMPORT_COST_ATTN_BWD: { /* q[..., L, E], k[..., S, E], v[..., S, Ev] */
        size_t q = cost == ANALYZE_IMPORT_COST_ATTN ? 0 : 1;
        uint64_t l = dim(in, nin, q, -2), e = dim(in, nin, q, -1), s = dim(in, nin, q + 1, -2);
        uint64_t ev = dim(in, nin, q + 2, -1), batch = l && e ? numel(in, nin, q) / (l * e) : 0;
        uint64_t fwd = 2 * batch * l * s * (e + ev) + 5 * batch * l * s;
        f = cost == ANALYZE_IMPORT_COST_ATTN ? fwd : 2 * fwd;
        b = (sum_numel(in, nin) + (o ? o : numel(in, nin, q))) * es;
        break;
    }
    case ANALYZE_IMPORT_COST_FOREACH:
        f = 2 * numel(in, nin, 0);
        b = (sum_numel(in, nin) + numel(in, nin, 0)) * es;
        break;
    case ANALYZE_IMPORT_COST_COUNT: break;
    }
    *flops = f;
    *bytes = b;
}

/* ---- attrs ---------------------------------------------------------------- */

/* Argument i as a pair (an int stands for both; a list of one too). */
static int pair(const analyze_import_scalar *a, size_t n, size_t i, int64_t *x, int64_t *y)
{
    if (i >= n || a[i].n < 1 || a[i].n > 2)
        return -1;
    *x = a[i].v[0];
    *y = a[i].n == 2 ? a[i].v[1] : a[i].v[0];
    return *x >= 0 && *y >= 0 && *x <= INT32_MAX && *y <= INT32_MAX ? 0 : -1;
}

size_t analyze_import_attrs_of(analyze_import_attrs kind, const analyze_import_scalar *args, size_t nargs,
                               int64_t *attrs)
{
    switch (kind) {
    case ANALYZE_IMPORT_ATTRS_MM:
    case ANALYZE_IMPORT_ATTRS_MM_TB:
        attrs[0] = 0;
        attrs[1] = kind == ANALYZE_IMPORT_ATTRS_MM_TB;
        return 2;
    case ANALYZE_IMPORT_ATTRS_CONV:
    case ANALYZE_IMPORT_ATTRS_CONV_BWD: {
        size_t at = kind == ANALYZE_IMPORT_ATTRS_CONV ? 3 : 4;
        if (pair(args, nargs, at, &attrs[0], &attrs[1]) || pair(args, nargs, at + 1, &attrs[2], &attrs[3]) ||
            !attrs[0] || !attrs[1])
            return 0;
        /* a dilated convolution is not the engine's (dilation follows the
         * padding in every convolution's signature) */
        int64_t dh, dw;
        if (!pair(args, nargs, at + 2, &dh, &dw) && (dh != 1 || dw != 1))
            return 0;
        return 4;
    }
    case ANALYZE_IMPORT_ATTRS_POOL:
    case ANALYZE_IMPORT_ATTRS_POOL_BWD: {
        size_t at = kind == ANALYZE_IMPORT_ATTRS_POOL ? 1 : 2;
        if (pair(args, nargs, at, &attrs[0], &attrs[1]) || !attrs[0] || !attrs[1])
            return 0;
        if (nargs > at + 1 && args[at + 1].n == 0) /* stride []: the kernel's */
            attrs[2] = attrs[0], attrs[3] = attrs[1];
        else if (pair(args, nargs, at + 1, &attrs[2], &attrs[3]) || !attrs[2] || !attrs[3])
            return 0;
        if (nargs > at + 2 && args[at + 2].n == 0)
            attrs[4] = attrs[5] = 0;
        else if (pair(args, nargs, at + 2, &attrs[4], &attrs[5]))
            return 0;
        /* a dilation other than 1 (max pools: a list after the padding) or
         * ceil_mode (the output rounded up: the boolean after the padding or
         * the dilation) is not the engine's pool */
        size_t ceil = at + 3;
        if (nargs > at + 3 && args[at + 3].n == 2) {
            if (args[at + 3].v[0] != 1 || args[at + 3].v[1] != 1)
                return 0;
            ceil = at + 4;
        }
        if (nargs > ceil && args[ceil].n == 1 && args[ceil].v[0])
            return 0;
        return 6;
    }
    case ANALYZE_IMPORT_ATTRS_NONE: break;
    }
    return 0;
}
