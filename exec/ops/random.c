/* random.c -- random sampling: RandomStandardNormal, RandomUniform, Dropout.
 *
 * Draws differ from run to run and are deterministic for the graph seed:
 * the stream of a node in a run is exec_kseed(k, n). Work is split into
 * fixed-size chunks, each with its own stream derived from that seed and
 * the chunk index, so the result does not depend on the thread count. */
#include "../internal.h"
#include "../rng.h"

#define CHUNK 4096      /* elements per stream (even: normals come in pairs) */
#define DROPOUT_LANES 8 /* Dropout: streams per chunk */
#define PAR_MIN 32768

static inline exec_rng chunk_rng(uint64_t seed, int64_t c)
{
    return exec_rng_make(seed ^ exec_splitmix64((uint64_t)c * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
}

/* uniform in (0, 1] (safe for log) */
static inline float u01_open0(exec_rng *r) { return (float)((exec_rng_u64(r) >> 40) + 1) * (1.0f / 16777216.0f); }

/* attrs: two floats, then the dims */
static exec_status shape_random(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    (void)g;
    int nd = n->nattrs - 2;
    if (nd < 1 || nd > EXEC_MAX_DIMS)
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants 1 to %d dims after the two float attributes (got %d)",
                         exec_op_name(n->op), EXEC_MAX_DIMS, nd);
    for (int i = 0; i < nd; i++)
        if (n->attrs[2 + i] <= 0)
            return exec_fail(EXEC_ERR_SHAPE, "%s: dim %d is %lld", exec_op_name(n->op), i, (long long)n->attrs[2 + i]);
    exec_shape_set(out, EXEC_F32, nd, &n->attrs[2]);
    return EXEC_OK;
}

/* ---- RandomStandardNormal: attrs mean(f), stddev(f), dims...; out [dims]
 * Box-Muller, both values of each pair used. ----------------------------- */
exec_status op_shape_RandomStandardNormal(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    return shape_random(g, n, out);
}

exec_status op_fwd_RandomStandardNormal(exec_kctx *k, const exec_node *n)
{
    float *restrict Y = exec_outf(k, n, 0);
    int64_t total = exec_out(k, n, 0)->numel, nchunks = (total + CHUNK - 1) / CHUNK;
    float mean = exec_attr_getf(n->attrs[0]), sd = exec_attr_getf(n->attrs[1]);
    uint64_t seed = exec_kseed(k, n);
#pragma omp parallel for num_threads(k->nthreads) if (total > PAR_MIN)
    for (int64_t c = 0; c < nchunks; c++) {
        exec_rng r = chunk_rng(seed, c);
        int64_t lo = c * CHUNK, hi = lo + CHUNK < total ? lo + CHUNK : total;
        for (int64_t i = lo; i < hi; i += 2) {
            float u1 = u01_open0(&r), u2 = exec_rng_uniform(&r);
            float rad = sqrtf(-2.0f * logf(u1)), th = 6.28318530718f * u2;
            Y[i] = mean + sd * rad * cosf(th);
            if (i + 1 < hi)
                Y[i + 1] = mean + sd * rad * sinf(th);
        }
    }
    return EXEC_OK;
}

/* ---- RandomUniform: attrs lo(f), hi(f), dims...; out [dims] in [lo, hi) */
exec_status op_shape_RandomUniform(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    return shape_random(g, n, out);
}

exec_status op_fwd_RandomUniform(exec_kctx *k, const exec_node *n)
{
    float *restrict Y = exec_outf(k, n, 0);
    int64_t total = exec_out(k, n, 0)->numel, nchunks = (total + CHUNK - 1) / CHUNK;
    float lo = exec_attr_getf(n->attrs[0]), hi = exec_attr_getf(n->attrs[1]), span = hi - lo;
    float top = hi > lo ? nextafterf(hi, lo) : lo; /* lo + span*u may round up to hi */
    uint64_t seed = exec_kseed(k, n);
#pragma omp parallel for num_threads(k->nthreads) if (total > PAR_MIN)
    for (int64_t c = 0; c < nchunks; c++) {
        exec_rng r = chunk_rng(seed, c);
        int64_t a = c * CHUNK, b = a + CHUNK < total ? a + CHUNK : total;
        for (int64_t i = a; i < b; i++) {
            float v = lo + span * exec_rng_uniform(&r);
            Y[i] = v < top ? v : top;
        }
    }
    return EXEC_OK;
}

/* ---- Dropout (inverted): in [x]; attrs rate(f), seed (0 or absent: new
 * draws every run; nonzero: the same mask every run, for tests);
 * out: y = x * mask, mask [like x] = (u >= rate) / (1 - rate). --------- */
static float dropout_rate(const exec_node *n) { return n->nattrs > 0 ? exec_attr_getf(n->attrs[0]) : 0.5f; }

exec_status op_shape_Dropout(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    float rate = dropout_rate(n);
    if (x->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "Dropout: wants a float tensor");
    if (!(rate >= 0.0f && rate < 1.0f))
        return exec_fail(EXEC_ERR_SHAPE, "Dropout: rate %g outside [0, 1)", (double)rate);
    exec_shape_of(&out[0], x);
    exec_shape_of(&out[1], x);
    return EXEC_OK;
}

exec_status op_fwd_Dropout(exec_kctx *k, const exec_node *n)
{
    const float *restrict X = exec_inf(k, n, 0);
    float *restrict Y = exec_outf(k, n, 0), *restrict M = exec_outf(k, n, 1);
    int64_t total = exec_in(k, n, 0)->numel, nchunks = (total + CHUNK - 1) / CHUNK;
    float rate = dropout_rate(n), scale = 1.0f / (1.0f - rate);
    uint64_t seed = n->nattrs > 1 && n->attrs[1]
                        ? exec_splitmix64(k->g->seed ^ exec_splitmix64((uint64_t)n->attrs[1] + n->id))
                        : exec_kseed(k, n);
    /* DROPOUT_LANES streams a chunk, element i of the chunk from stream
     * i % DROPOUT_LANES: independent generator steps (one xorshift's steps
     * depend on each other) that the compiler runs side by side */
#pragma omp parallel for num_threads(k->nthreads) if (total > PAR_MIN)
    for (int64_t c = 0; c < nchunks; c++) {
        uint64_t st[DROPOUT_LANES];
        for (int s = 0; s < DROPOUT_LANES; s++)
            st[s] = chunk_rng(seed, c * DROPOUT_LANES + s).s;
        int64_t a = c * CHUNK, b = a + CHUNK < total ? a + CHUNK : total, i = a;
        for (; i + DROPOUT_LANES <= b; i += DROPOUT_LANES)
#pragma omp simd
            for (int s = 0; s < DROPOUT_LANES; s++) {
                exec_rng r = { st[s] };
                float m = exec_rng_uniform(&r) >= rate ? scale : 0.0f;
                st[s] = r.s;
                M[i + s] = m;
                Y[i + s] = X[i + s] * m;
            }
        for (int s = 0; i < b; i++, s++) {
            exec_rng r = { st[s] };
            float m = exec_rng_uniform(&r) >= rate ? scale : 0.0f;
            st[s] = r.s;
            M[i] = m;
            Y[i] = X[i] * m;
        }
    }
    return EXEC_OK;
}

exec_status op_grad_Dropout(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    din[0] = din[0] && dout[0] ? exec_op1(g, EXEC_OP_Mul, 2, (uint32_t[]){ dout[0], n->out[1] }, 0, NULL) : 0;
    return g->status;
}
