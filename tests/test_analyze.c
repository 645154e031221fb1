/* test_analyze.c -- the analyzer on traces with known op sequences, written
 * by the ctfgen fixture (tests/fixtures): exact counts and times, step
 * skipping, shares, the JSON layout, similarity, training/inference
 * pairing, the diff of two traces, scaling across thread counts (Amdahl
 * fits), and the warnings and errors of damaged or foreign traces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "analyze/profile.h"
#include "analyze/read_trace.h"
#include "analyze/breakdown.h"
#include "analyze/compare.h"
#include "analyze/diff.h"
#include "analyze/scaling.h"
#include "analyze/similarity.h"
#include "fixtures/ctfgen.h"
#include "fixtures/capture.h"
#include "fixtures/scenario.h"
#include "fixtures/testdir.h"
#include "tracer/archive.h"
#include "tracer/opspack.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes a scenario into a fresh directory named `name`; returns its path. */
static const char *make(const char *name, const char *recipe, const char *model, int mode, uint32_t steps, scen *extra)
{
    static char paths[32][4200];
    static int next;
    char *path = paths[next++ % 32];
    snprintf(path, 4200, "%s/%s", testdir_path, name);
    scen s = extra ? *extra : (scen){ 0 };
    s.model = model;
    s.mode = mode;
    s.steps = steps;
    if (!extra)
        s.run_begin = 1;
    s.ops = scen_recipe(recipe, mode, &s.nops);
    s.uuid_seed = (uint64_t)next * 7919;
    assert_non_null(s.ops);
    assert_int_equal(scen_write(path, &s), 0);
    return path;
}

static analyze_profile *read_ok(const char *path, uint32_t skip_first, uint32_t skip_last)
{
    analyze_read_options o = { skip_first, skip_last };
    analyze_profile *p = NULL;
    int rc = analyze_read(path, &o, &p);
    if (rc)
        fprintf(stderr, "analyze_read: %s\n", base_errmsg());
    assert_int_equal(rc, 0);
    assert_non_null(p);
    return p;
}

static const analyze_optype *op_named(const analyze_profile *p, const char *name)
{
    for (size_t i = 0; i < p->nops; i++)
        if (strcmp(p->ops[i].name, name) == 0)
            return &p->ops[i];
    return NULL;
}

/* Expected count and time of op `name` in `phase` (-1: any) per step. */
static void expect_per_step(const scen_op *r, size_t n, const char *name, int phase, uint64_t *count, uint64_t *ns)
{
    *count = *ns = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].op, name) == 0 && (phase < 0 || r[i].phase == phase))
            (*count)++, *ns += r[i].ns;
}

static void check_counts(const analyze_profile *p, const char *recipe, int mode, uint64_t kept)
{
    size_t n;
    const scen_op *r = scen_recipe(recipe, mode, &n);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const analyze_optype *o = op_named(p, r[i].op);
        assert_non_null(o);
        uint64_t c, ns;
        expect_per_step(r, n, r[i].op, -1, &c, &ns);
        assert_int_equal(o->all.count, c * kept);
        assert_int_equal(o->all.ns, ns * kept);
        expect_per_step(r, n, r[i].op, r[i].phase, &c, &ns);
        assert_int_equal(o->phase[r[i].phase].count, c * kept);
        assert_int_equal(o->phase[r[i].phase].ns, ns * kept);
        assert_int_equal(o->all.flops, 1000 * o->all.ns); /* the fixture's op_end flops */
        total += r[i].ns;
    }
    assert_int_equal(analyze_profile_total_ns(p), total * kept);
}

static uint64_t step_ns(const char *recipe, int mode)
{
    size_t n;
    const scen_op *r = scen_recipe(recipe, mode, &n);
    uint64_t t = 40 + 10 * n; /* the fixture's layout: see scenario.c */
    for (size_t i = 0; i < n; i++)
        t += r[i].ns;
    return t;
}

/* ---- tests -------------------------------------------------------------------------- */
static void test_counts_exact(void **state)
{
    (void)state;
    scen s = { .run_begin = 1, .setup_ops = 3, .nstreams = 3 };
    const char *dir = make("counts", "conv", "alexnet", CTFGEN_TRAIN, 5, &s);
    analyze_profile *p = read_ok(dir, 0, 0);
    check_counts(p, "conv", CTFGEN_TRAIN, 5);
    assert_int_equal(p->steps_seen, 5);
    assert_int_equal(analyze_profile_steps_kept(p), 5);
    assert_int_equal(p->step.min_ns, step_ns("conv", CTFGEN_TRAIN));
    assert_int_equal(p->step.max_ns, step_ns("conv", CTFGEN_TRAIN));
    /* the weight initialisation ran outside the steps: not in the profile */
    assert_int_equal(p->outside.count, 3);
    assert_int_equal(p->outside.ns, 1500);
    const analyze_optype *rnd = op_named(p, "RandomStandardNormal");
    assert_true(!rnd || rnd->all.count == 0);
    assert_string_equal(p->meta.model, "alexnet");
    assert_string_equal(p->meta.mode, "train");
    assert_string_equal(p->meta.preset, "tiny");
    assert_int_equal(p->meta.steps, 5);
    assert_int_equal(p->meta.seed, 42);
    assert_int_equal(analyze_profile_warnings(p, NULL, 0), 0);
    /* memory: 4 weights of 512 B and one 2048 B activation per step */
    assert_int_equal(p->peak_bytes, 4 * 512 + 2048);
    for (size_t r = 0; r < p->nroles; r++) {
        if (strcmp(p->roles[r], "weight") == 0)
            assert_int_equal(p->role_peak[r], 2048);
        else if (strcmp(p->roles[r], "activation") == 0)
            assert_int_equal(p->role_peak[r], 2048);
    }
    assert_int_equal(p->tensors_live, 4);
    analyze_profile_destroy(p);
}

static void test_skip_steps(void **state)
{
    (void)state;
    const char *dir = make("skip", "conv", "alexnet", CTFGEN_TRAIN, 6, NULL);
    for (uint32_t sf = 0; sf <= 2; sf++)
        for (uint32_t sl = 0; sl <= 3; sl++) {
            analyze_profile *p = read_ok(dir, sf, sl);
            check_counts(p, "conv", CTFGEN_TRAIN, 6 - sf - sl);
            assert_int_equal(analyze_profile_steps_kept(p), 6 - sf - sl);
            assert_int_equal(p->steps_seen, 6);
            analyze_profile_destroy(p);
        }
    /* skipping everything is said */
    analyze_profile *p = read_ok(dir, 3, 3);
    assert_int_equal(analyze_profile_total_ns(p), 0);
    char w[1024];
    assert_true(analyze_profile_warnings(p, w, sizeof w) >= 1);
    assert_non_null(strstr(w, "all 6 steps skipped"));
    analyze_profile_destroy(p);
}

/* Ops that end after their step ended still count for that step; the ring
 * of the last steps drops exactly skip_last of them. */
static void test_profile_direct(void **state)
{
    (void)state;
    analyze_profile *p = analyze_profile_create("direct", 1, 1);
    assert_non_null(p);
    int mm = analyze_profile_intern_op(p, "MatMul", "matrix");
    int ad = analyze_profile_intern_op(p, "Add", "elementwise");
    assert_true(mm >= 0 && ad >= 0);
    uint64_t t = 0;
    for (uint32_t s = 0; s < 5; s++) {
        assert_int_equal(analyze_profile_step_begin(p, t, s), 0);
        assert_int_equal(analyze_profile_op(p, t + 1, t + 11, mm, ANALYZE_PHASE_FORWARD, 5, 6), 0);
        assert_int_equal(analyze_profile_step_end(p, t + 20, s), 0);
        /* the Add of this step ends after step_end */
        assert_int_equal(analyze_profile_op(p, t + 2, t + 102, ad, ANALYZE_PHASE_BACKWARD, 0, 0), 0);
        t += 1000;
    }
    analyze_profile_finish(p);
    assert_int_equal(p->ops[mm].all.count, 3);
    assert_int_equal(p->ops[mm].all.ns, 30);
    assert_int_equal(p->ops[mm].all.flops, 15);
    assert_int_equal(p->ops[ad].phase[ANALYZE_PHASE_BACKWARD].count, 3);
    assert_int_equal(p->ops[ad].all.ns, 300);
    assert_int_equal(p->step.count, 3);
    assert_int_equal(p->step.ns, 60);
    assert_int_equal(p->diag.unmatched_begin, 0);
    assert_int_equal(p->diag.unmatched_end, 0);
    analyze_profile_destroy(p);
}

static json_t *json_of_breakdown(analyze_profile **p, size_t n)
{
    capture c;
    assert_int_equal(analyze_breakdown(capture_open(&c), p, n, CLI_JSON, 0), 0);
    char *buf = capture_close(&c);
    json_error_t e;
    json_t *j = json_loads(buf, 0, &e);
    free(buf);
    assert_non_null(j);
    return j;
}

static void assert_keys(json_t *o, const char *const *keys, size_t n)
{
    assert_true(json_is_object(o));
    assert_int_equal(json_object_size(o), n);
    for (size_t i = 0; i < n; i++)
        assert_non_null(json_object_get(o, keys[i]));
}

static void test_breakdown_json(void **state)
{
    (void)state;
    analyze_profile *p[2];
    p[0] = read_ok(make("json-a", "conv", "alexnet", CTFGEN_TRAIN, 4, NULL), 1, 1);
    p[1] = read_ok(make("json-b", "fc", "memnet", CTFGEN_INFER, 3, NULL), 0, 0);
    json_t *j = json_of_breakdown(p, 2);
    static const char *const top[] = { "schema", "traces" };
    static const char *const tk[] = { "model", "mode", "steps", "total_ns", "op_types", "classes" };
    static const char *const ok[] = { "op", "class", "ns", "count", "share" };
    static const char *const ck[] = { "class", "ns", "share" };
    assert_keys(j, top, 2);
    assert_int_equal(json_integer_value(json_object_get(j, "schema")), 1);
    json_t *traces = json_object_get(j, "traces");
    assert_int_equal(json_array_size(traces), 2);
    for (size_t k = 0; k < 2; k++) {
        json_t *t = json_array_get(traces, k);
        assert_keys(t, tk, 6);
        assert_int_equal(json_integer_value(json_object_get(t, "total_ns")), analyze_profile_total_ns(p[k]));
        double sum = 0, csum = 0;
        uint64_t nsum = 0;
        size_t i;
        json_t *o;
        double prev = INFINITY;
        json_array_foreach(json_object_get(t, "op_types"), i, o)
        {
            assert_keys(o, ok, 5);
            sum += json_real_value(json_object_get(o, "share"));
            nsum += (uint64_t)json_integer_value(json_object_get(o, "ns"));
            double ns = (double)json_integer_value(json_object_get(o, "ns"));
            assert_true(ns <= prev); /* largest first */
            prev = ns;
        }
        json_array_foreach(json_object_get(t, "classes"), i, o)
        {
            assert_keys(o, ck, 3);
            csum += json_real_value(json_object_get(o, "share"));
        }
        assert_true(fabs(sum - 1.0) < 1e-9);
        assert_true(fabs(csum - 1.0) < 1e-9);
        assert_int_equal(nsum, analyze_profile_total_ns(p[k]));
    }
    json_t *t0 = json_array_get(traces, 0);
    assert_string_equal(json_string_value(json_object_get(t0, "model")), "alexnet");
    assert_string_equal(json_string_value(json_object_get(t0, "mode")), "train");
    assert_int_equal(json_integer_value(json_object_get(t0, "steps")), 2);
    json_t *first = json_array_get(json_object_get(t0, "op_types"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "op")), "Conv2DBackpropFilter");
    assert_string_equal(json_string_value(json_object_get(first, "class")), "convolution");
    assert_int_equal(json_integer_value(json_object_get(first, "count")), 2);
    assert_int_equal(json_integer_value(json_object_get(first, "ns")), 3000);
    json_t *t1 = json_array_get(traces, 1);
    assert_string_equal(json_string_value(json_object_get(t1, "mode")), "infer");
    json_decref(j);
    /* the cumulative view: conv train needs 6 of its 11 op types for 90% */
    size_t ord[64];
    assert_true(p[0]->nops <= 64);
    analyze_profile_ops_by_time(p[0], ord);
    assert_int_equal(analyze_ops_for_share(p[0], ord, 0.9), 6);
    assert_int_equal(analyze_ops_for_share(p[0], ord, 1.0), 11);
    analyze_profile_destroy(p[0]);
    analyze_profile_destroy(p[1]);
}

static void test_similarity(void **state)
{
    (void)state;
    analyze_profile *p[4];
    p[0] = read_ok(make("sim-a", "conv", "alexnet", CTFGEN_TRAIN, 3, NULL), 0, 0);
    p[1] = read_ok(make("sim-b", "conv", "vgg", CTFGEN_TRAIN, 5, NULL), 0, 0); /* same mix, more steps */
    p[2] = read_ok(make("sim-c", "disjoint", "odd", CTFGEN_TRAIN, 3, NULL), 0, 0);
    p[3] = read_ok(make("sim-d", "fc", "memnet", CTFGEN_TRAIN, 3, NULL), 0, 0);
    analyze_sim *s = analyze_sim_create(p, 4, 0);
    assert_non_null(s);
    assert_int_equal(s->n, 4);
    for (size_t i = 0; i < 4; i++)
        assert_true(fabs(s->cos[i * 4 + i] - 1.0) < 1e-12);
    assert_true(fabs(s->cos[0 * 4 + 1] - 1.0) < 1e-12); /* identical op mixes */
    assert_true(s->cos[0 * 4 + 2] == 0.0);              /* no op in common */
    assert_true(s->cos[3 * 4 + 2] == 0.0);
    assert_true(s->cos[0 * 4 + 3] > 0.0 && s->cos[0 * 4 + 3] < 1.0);
    assert_true(fabs(s->cos[0 * 4 + 3] - s->cos[3 * 4 + 0]) < 1e-15);
    /* clustering: alexnet+vgg first at distance 0; the disjoint one last at 1 */
    assert_int_equal(s->merges[0].a, 0);
    assert_int_equal(s->merges[0].b, 1);
    assert_true(fabs(s->merges[0].distance) < 1e-12);
    assert_int_equal(s->merges[1].b, 4); /* memnet joins {alexnet, vgg} */
    assert_int_equal(s->merges[1].a, 3);
    assert_true(fabs(s->merges[1].distance - (1.0 - s->cos[0 * 4 + 3])) < 1e-12);
    assert_int_equal(s->merges[2].a, 2);
    assert_true(fabs(s->merges[2].distance - 1.0) < 1e-12);
    assert_int_equal(s->merges[2].size, 4);
    /* the text output holds the matrix and a dendrogram */
    capture c;
    assert_int_equal(analyze_similarity(capture_open(&c), s, 0, CLI_TEXT), 0);
    char *buf = capture_close(&c);
    assert_non_null(strstr(buf, "alexnet/train"));
    assert_non_null(strstr(buf, "distance = 1 - cosine"));
    free(buf);
    analyze_sim_destroy(s);
    /* by class: conv and disjoint still share no class */
    s = analyze_sim_create(p, 4, 1);
    assert_true(s->cos[0 * 4 + 2] == 0.0);
    assert_int_equal(s->dim, 6); /* the classes seen (random only outside steps: none here) */
    analyze_sim_destroy(s);
    /* several traces of one model are summed into one group */
    analyze_profile *q[2] = { p[0], p[0] };
    s = analyze_sim_create(q, 2, 0);
    assert_int_equal(s->n, 1);
    analyze_sim_destroy(s);
    for (int i = 0; i < 4; i++)
        analyze_profile_destroy(p[i]);
}

static void test_pairing(void **state)
{
    (void)state;
    analyze_profile *p[5];
    p[0] = read_ok(make("pair-mi", "fc", "memnet", CTFGEN_INFER, 3, NULL), 0, 0);
    p[1] = read_ok(make("pair-at", "conv", "alexnet", CTFGEN_TRAIN, 3, NULL), 0, 0);
    p[2] = read_ok(make("pair-ai", "conv", "alexnet", CTFGEN_INFER, 3, NULL), 0, 0);
    p[3] = read_ok(make("pair-mt", "fc", "memnet", CTFGEN_TRAIN, 3, NULL), 0, 0);
    p[4] = read_ok(make("pair-vt", "conv", "vgg", CTFGEN_TRAIN, 3, NULL), 0, 0);
    analyze_pair pr[5];
    int used[5];
    int n = analyze_pairs(p, 5, 0, pr, used);
    assert_int_equal(n, 2);
    assert_int_equal(pr[0].train, 1);
    assert_int_equal(pr[0].infer, 2);
    assert_int_equal(pr[1].train, 3);
    assert_int_equal(pr[1].infer, 0);
    assert_int_equal(used[4], 0);
    double ratio = analyze_step_ns(p[1]) / analyze_step_ns(p[2]);
    assert_true(fabs(ratio - (double)step_ns("conv", CTFGEN_TRAIN) / (double)step_ns("conv", CTFGEN_INFER)) < 1e-12);
    /* explicit pairs: in order, and checked */
    analyze_profile *q[4] = { p[1], p[2], p[3], p[0] };
    assert_int_equal(analyze_pairs(q, 4, 1, pr, used), 2);
    analyze_profile *bad[2] = { p[2], p[1] };
    assert_int_equal(analyze_pairs(bad, 2, 1, pr, used), -1);
    analyze_profile *none[2] = { p[4], p[0] };
    assert_int_equal(analyze_pairs(none, 2, 0, pr, used), -1);
    /* the JSON: ops only in training */
    n = analyze_pairs(p, 5, 0, pr, used);
    capture c;
    assert_int_equal(analyze_compare(capture_open(&c), p, pr, (size_t)n, CLI_JSON), 0);
    char *buf = capture_close(&c);
    json_error_t e;
    json_t *j = json_loads(buf, 0, &e);
    free(buf);
    assert_non_null(j);
    json_t *a = json_array_get(json_object_get(j, "pairs"), 0);
    assert_string_equal(json_string_value(json_object_get(a, "model")), "alexnet");
    assert_true(fabs(json_real_value(json_object_get(a, "step_ratio")) - ratio) < 1e-9);
    json_t *only = json_object_get(a, "train_only");
    const char *expect[] = { "Conv2DBackpropFilter", "Conv2DBackpropInput", "ApplyAdam", "MaxPoolGrad", "ReluGrad" };
    assert_int_equal(json_array_size(only), 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(only, i), "op")), expect[i]);
    json_decref(j);
    for (int i = 0; i < 5; i++)
        analyze_profile_destroy(p[i]);
}

static void test_discarded_warns(void **state)
{
    (void)state;
    scen s = { .run_begin = 1, .discard_n = 7 };
    analyze_profile *p = read_ok(make("discard", "conv", "alexnet", CTFGEN_TRAIN, 4, &s), 0, 0);
    assert_int_equal(p->diag.discarded_events, 7);
    char w[2048];
    assert_true(analyze_profile_warnings(p, w, sizeof w) >= 1);
    assert_non_null(strstr(w, "7 events discarded by the tracer"));
    analyze_profile_destroy(p);
}

static void test_foreign_provider(void **state)
{
    (void)state;
    scen s = { .run_begin = 1, .foreign_every = 5 };
    analyze_profile *p = read_ok(make("mixed", "conv", "alexnet", CTFGEN_TRAIN, 3, &s), 0, 0);
    check_counts(p, "conv", CTFGEN_TRAIN, 3); /* foreign events change nothing */
    assert_int_equal(p->diag.foreign_events, 36 / 5);
    char w[2048];
    assert_true(analyze_profile_warnings(p, w, sizeof w) >= 1);
    assert_non_null(strstr(w, "7 events of other providers ignored"));
    analyze_profile_destroy(p);

    scen o = { .only_foreign = 1 };
    const char *dir = make("foreign", "conv", "x", CTFGEN_TRAIN, 1, &o);
    analyze_profile *q = NULL;
    assert_int_equal(analyze_read(dir, NULL, &q), ANALYZE_ERR_INPUT);
    assert_null(q);
    assert_non_null(strstr(base_errmsg(), "no fathom events"));
    assert_non_null(strstr(base_errmsg(), "100 events of other providers"));
}

static void test_unknown_schema(void **state)
{
    (void)state;
    scen s = { .run_begin = 1, .schema = 4 };
    const char *dir = make("schema4", "conv", "alexnet", CTFGEN_TRAIN, 2, &s);
    analyze_profile *p = NULL;
    assert_int_equal(analyze_read(dir, NULL, &p), ANALYZE_ERR_INPUT);
    assert_null(p);
    assert_non_null(strstr(base_errmsg(), "unknown trace schema version 4"));
    assert_null(strchr(base_errmsg(), '\n'));
}

/* ---- schema 2 and 3: node_def + ops ------------------------------------------
 * A hand-made schema-2 trace (or schema 3: its records packed, those that
 * do not fit exact, as the provider writes them): 3 steps of MatMul (node 0, 400 ns) then Relu
 * (node 1, 100 ns) on the main thread, and BiasAdd (node 2, 250 ns) on a
 * worker thread; `defect` adds one problem:
 *   1: a record naming node 9, which no node_def describes;
 *   2: an ops event whose sequences have unequal lengths (its 3 records lost);
 *   3: a record that ends before it begins (counted as 0 ns);
 *   4: run_end says 2 ops more than the trace holds;
 *   5: after step 0, a run_begin with every field 0 (schema 0, empty
 *      strings), as a stream's zeroed bytes decode;
 *   6: in step 1, a MatMul record whose end has bit 40 flipped: 18 minutes
 *      after the ops event that carries it;
 *   7: in step 2, a MatMul record that begins before its thread's last ops
 *      event (a begin's high bits cleared);
 * and in schema 3 alone, the packed records' own:
 *   8: the ops events lack their base (every one malformed);
 *   9: in step 1, a packed record whose gap puts it after its ops event;
 *  10: in step 1, an event of packed records whose durations are one short;
 *  11: in step 1, an event of packed records whose base and duration pass
 *      2^64 ns;
 *  12: in step 1, an event with packed records and exact ones at once. */
enum { S2_MAIN = 100, S2_WORKER = 101 };
static const char *make_ops_trace(const char *name, uint32_t schema, int defect)
{
    static char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", testdir_path, name);
    ctfgen_options o = { .nstreams = 2, .packed = schema == 3 ? (defect == 8 ? CTFGEN_PACKED_NO_BASE : 1) : 0 };
    ctfgen *g = ctfgen_create(dir, &o);
    assert_non_null(g);
    int mm = ctfgen_op(g, "MatMul"), relu = ctfgen_op(g, "Relu"), bias = ctfgen_op(g, "BiasAdd");
    uint64_t t = 1000;
    uint32_t in0[2] = { 1, 2 }, out0[1] = { 3 }, in1[1] = { 3 }, out1[1] = { 4 }, in2[2] = { 3, 5 }, out2[1] = { 6 };
    int64_t attrs0[2] = { 0, 1 };
    assert_int_equal(ctfgen_run_begin(g, t++, S2_MAIN, schema, "mlp", CTFGEN_TRAIN, "tiny", 4, 3, 2, 2, 1), 0);
    uint32_t shape[2] = { 4, 4 };
    for (uint32_t id = 1; id <= 6; id++)
        assert_int_equal(ctfgen_tensor_alloc(g, t++, S2_MAIN, id, CTFGEN_ACTIVATION, 2, shape, 64), 0);
    assert_int_equal(
        ctfgen_node_def(g, t++, S2_MAIN, 0, 0, mm, CTFGEN_MATRIX, CTFGEN_FORWARD, 2, in0, 1, out0, 2, attrs0, 128, 192),
        0);
    assert_int_equal(ctfgen_node_def(g, t++, S2_MAIN, 0, 1, relu, CTFGEN_ELEMENTWISE, CTFGEN_FORWARD, 1, in1, 1, out1,
                                     0, NULL, 16, 128),
                     0);
    assert_int_equal(ctfgen_node_def(g, t++, S2_MAIN, 0, 2, bias, CTFGEN_ELEMENTWISE, CTFGEN_FORWARD, 2, in2, 1, out2,
                                     0, NULL, 16, 192),
                     0);
    uint64_t held = 0;
    for (uint32_t st = 0; st < 3; st++) {
        t += 1000;
        assert_int_equal(ctfgen_step_begin(g, t, S2_MAIN, st), 0);
        uint64_t b = t + 100;
        uint32_t nodes[2] = { 0, 1 };
        uint64_t begins[2] = { b, b + 500 }, ends[2] = { b + 400, b + 600 };
        if (defect == 1 && st == 1)
            nodes[1] = 9;
        if (defect == 3 && st == 2)
            ends[1] = begins[1] - 50;
        if (defect == 6 && st == 1)
            ends[0] ^= (uint64_t)1 << 40;
        if (defect == 7 && st == 2)
            begins[0] = 5;
        uint32_t wn[1] = { 2 };
        uint64_t wb[1] = { b + 200 }, we[1] = { b + 450 };
        assert_int_equal(ctfgen_ops(g, b + 460, S2_WORKER, 0, 1, wn, 1, wb, 1, we), 0);
        uint32_t gap[2] = { 0, 100 }, dur[2] = { 400, 100 };
        if (defect == 9 && st == 1)
            gap[1] = 5000; /* begins 4.7 us after its event */
        if (defect == 11 && st == 1)
            dur[0] = 1000;
        uint64_t base = defect == 11 && st == 1 ? UINT64_MAX - 600 : b;
        if (defect == 2 && st == 0)
            assert_int_equal(ctfgen_ops(g, b + 700, S2_MAIN, 0, 2, nodes, 2, begins, 1, ends), 0);
        else if (defect >= 9 && defect <= 12 && st == 1)
            assert_int_equal(ctfgen_ops_packed(g, b + 700, S2_MAIN, 0, base, 2, nodes, 2, gap, defect == 10 ? 1 : 2,
                                               dur, defect == 12 ? 2 : 0, begins, defect == 12 ? 2 : 0, ends),
                             0);
        else
            assert_int_equal(ctfgen_ops(g, b + 700, S2_MAIN, 0, 2, nodes, 2, begins, 2, ends), 0);
        held += 3;
        t = b + 800;
        assert_int_equal(ctfgen_step_end(g, t, S2_MAIN, st, 1.0), 0);
        if (defect == 5 && st == 0)
            assert_int_equal(ctfgen_run_begin(g, t + 1, S2_MAIN, 0, "", 0, "", 0, 0, 0, 0, 0), 0);
    }
    assert_int_equal(ctfgen_run_end(g, t + 10, S2_MAIN, 0, held + (defect == 4 ? 2 : 0)), 0);
    assert_int_equal(ctfgen_close(g), 0);
    return dir;
}

static const analyze_optype *optype(const analyze_profile *p, const char *name)
{
    for (size_t i = 0; i < p->nops; i++)
        if (!strcmp(p->ops[i].name, name))
            return &p->ops[i];
    return NULL;
}

/* A snapshot of a profile still being fed equals a profile fed the same
 * events and finished; the original goes on unchanged. */
static void test_snapshot(void **state)
{
    (void)state;
    analyze_profile *live = analyze_profile_create("live", 1, 1), *ref = analyze_profile_create("ref", 1, 1);
    assert_true(live && ref);
    analyze_profile *both[2] = { live, ref };
    for (int k = 0; k < 2; k++) {
        analyze_profile *p = both[k];
        int mm = analyze_profile_intern_op(p, "MatMul", "matrix"),
            ad = analyze_profile_intern_op(p, "Add", "elementwise");
        int w = analyze_profile_intern_role(p, "weight");
        assert_int_equal(analyze_profile_tensor_alloc(p, 1, w, 4096), 0);
        for (uint32_t st = 0; st < 4; st++) {
            uint64_t t = 1000 * (st + 1);
            assert_int_equal(analyze_profile_step_begin(p, t, st), 0);
            assert_int_equal(analyze_profile_op(p, t + 1, t + 11 + st, mm, ANALYZE_PHASE_FORWARD, 5, 6), 0);
            assert_int_equal(analyze_profile_op(p, t + 20, t + 25, ad, ANALYZE_PHASE_BACKWARD, 1, 2), 0);
            assert_int_equal(analyze_profile_step_end(p, t + 30, st), 0);
        }
    }
    analyze_profile_finish(ref);
    analyze_profile *snap = analyze_profile_snapshot(live);
    assert_non_null(snap);
    assert_int_equal(snap->steps_seen, ref->steps_seen);
    assert_int_equal(snap->step.count, ref->step.count);
    assert_int_equal(snap->step.ns, ref->step.ns);
    assert_int_equal(snap->ops[0].all.ns, ref->ops[0].all.ns);
    assert_int_equal(snap->ops[0].all.count, 2); /* steps 1 and 2 of 0..3 */
    assert_int_equal(snap->ops[1].all.ns, ref->ops[1].all.ns);
    assert_int_equal(snap->peak_bytes, 4096);
    analyze_profile_destroy(snap);
    /* the live one goes on */
    assert_int_equal(analyze_profile_step_begin(live, 9000, 4), 0);
    assert_int_equal(analyze_profile_op(live, 9001, 9101, 0, ANALYZE_PHASE_FORWARD, 5, 6), 0);
    assert_int_equal(analyze_profile_step_end(live, 9200, 4), 0);
    analyze_profile_finish(live);
    assert_int_equal(live->ops[0].all.count, 3);
    analyze_profile_destroy(live);
    analyze_profile_destroy(ref);
}

/* The name of a trace of schema s for the defect's test. */
static const char *ops_name(uint32_t s, const char *what)
{
    static char name[64];
    snprintf(name, sizeof name, "s%u-%s", (unsigned)s, what);
    return name;
}

/* make_ops_trace's defects 0 to 7 read the same in schema 2 and 3. */
static void check_ops_defects(uint32_t schema)
{
    analyze_profile *p = NULL;
    char w[2048];
    assert_int_equal(analyze_read(make_ops_trace(ops_name(schema, "ok"), schema, 0), NULL, &p), 0);
    assert_int_equal(p->meta.schema, schema);
    assert_int_equal(p->steps_seen, 3);
    assert_int_equal(p->ops_seen, 9);
    const analyze_optype *m = optype(p, "MatMul"), *r = optype(p, "Relu"), *b = optype(p, "BiasAdd");
    assert_true(m && r && b);
    assert_int_equal(m->all.count, 3);
    assert_int_equal(m->all.ns, 1200);
    assert_int_equal(m->all.flops, 3 * 128);
    assert_int_equal(m->all.bytes, 3 * 192);
    assert_int_equal(r->all.ns, 300);
    assert_int_equal(b->all.count, 3); /* the worker's records */
    assert_int_equal(b->all.ns, 750);
    assert_int_equal(analyze_profile_warnings(p, w, sizeof w), 0);
    analyze_profile_destroy(p);

    /* 1: an undefined node: a warning, the record not counted, nothing else lost */
    assert_int_equal(analyze_read(make_ops_trace(ops_name(schema, "undef"), schema, 1), NULL, &p), 0);
    assert_int_equal(p->diag.undefined_nodes, 1);
    assert_int_equal(optype(p, "Relu")->all.count, 2);
    assert_int_equal(optype(p, "MatMul")->all.count, 3);
    assert_true(analyze_profile_warnings(p, w, sizeof w) >= 1);
    assert_non_null(strstr(w, "1 op records name a node no node_def describes"));
    assert_null(strstr(w, "run_end says")); /* the count still agrees */
    analyze_profile_destroy(p);

    /* 2: sequences of unequal lengths: the event is malformed, its records ignored */
    assert_int_equal(analyze_read(make_ops_trace(ops_name(schema, "uneq"), schema, 2), NULL, &p), 0);
    assert_int_equal(p->diag.malformed_events, 1);
    assert_int_equal(optype(p, "MatMul")->all.count, 2);
    analyze_profile_warnings(p, w, sizeof w);
    assert_non_null(strstr(w, "1 fathom events with missing or mistyped fields ignored"));
    assert_non_null(strstr(w, "run_end says 9 ops ran, the trace holds 7"));
    analyze_profile_destroy(p);

    /* 3: an end before its begin: counted as 0 ns, said so */
    assert_int_equal(analyze_read(make_ops_trace(ops_name(schema, "neg"), schema, 3), NULL, &p), 0);
    assert_int_equal(p->diag.negative_time, 1);
    assert_int_equal(optype(p, "Relu")->all.ns, 200);
    analyze_profile_warnings(p, w, sizeof w);
    assert_non_null(strstr(w, "1 ops with impossible times"));
    analyze_profile_destroy(p);

    /* 4: run_end disagrees with the records */
    assert_int_equal(analyze_read(make_ops_trace(ops_name(schema, "count"), schema, 4), NULL, &p), 0);
    analyze_profile_warnings(p, w, sizeof w);
    assert_non_null(strstr(w, "run_end says 11 ops ran, the trace holds 9"));
    analyze_profile_destroy(p);

    /* 6: an end past its ops event is an impossible time: 0 ns, said so,
     * where it was a MatMul of 18 minutes in a step of 800 ns */
    assert_int_equal(analyze_read(make_ops_trace(ops_name(schema, "flip"), schema, 6), NULL, &p), 0);
    assert_int_equal(p->diag.negative_time, 1);
    assert_int_equal(optype(p, "MatMul")->all.count, 3);
    assert_int_equal(optype(p, "MatMul")->all.ns, 800);
    analyze_profile_warnings(p, w, sizeof w);
    assert_non_null(strstr(w, "1 ops with impossible times"));
    analyze_profile_destroy(p);

    /* 7: a begin before the thread's last ops event: the same */
    assert_int_equal(analyze_read(make_ops_trace(ops_name(schema, "early"), schema, 7), NULL, &p), 0);
    assert_int_equal(p->diag.negative_time, 1);
    assert_int_equal(optype(p, "MatMul")->all.ns, 800);
    analyze_profile_destroy(p);

    /* 5: a zeroed run_begin is a malformed event, not a trace of schema
     * version 0: the run's own metadata and every record stand */
    assert_int_equal(analyze_read(make_ops_trace(ops_name(schema, "zeroed"), schema, 5), NULL, &p), 0);
    assert_int_equal(p->diag.malformed_events, 1);
    assert_int_equal(p->meta.schema, schema);
    assert_string_equal(p->meta.model, "mlp");
    assert_int_equal(p->ops_seen, 9);
    analyze_profile_warnings(p, w, sizeof w);
    assert_non_null(strstr(w, "1 fathom events with missing or mistyped fields ignored"));
    analyze_profile_destroy(p);
}

static void test_schema2(void **state)
{
    (void)state;
    check_ops_defects(2);
}

/* Schema 3: the defects of schema 2 read the same; the packed records'
 * own are counted, never invented. */
static void test_schema3(void **state)
{
    (void)state;
    check_ops_defects(3);
    analyze_profile *p = NULL;
    char w[2048];
    /* 8: no base: every ops event malformed, no record read */
    assert_int_equal(analyze_read(make_ops_trace("s3-nobase", 3, 8), NULL, &p), 0);
    assert_int_equal(p->diag.malformed_events, 6);
    assert_int_equal(p->ops_seen, 0);
    analyze_profile_destroy(p);
    /* 9: a gap past its event: an impossible time, 0 ns */
    assert_int_equal(analyze_read(make_ops_trace("s3-past", 3, 9), NULL, &p), 0);
    assert_int_equal(p->diag.negative_time, 1);
    assert_int_equal(optype(p, "Relu")->all.ns, 200);
    assert_int_equal(optype(p, "MatMul")->all.ns, 1200);
    analyze_profile_destroy(p);
    /* 10: durations one short: the event malformed, its 2 records lost */
    assert_int_equal(analyze_read(make_ops_trace("s3-short", 3, 10), NULL, &p), 0);
    assert_int_equal(p->diag.malformed_events, 1);
    assert_int_equal(optype(p, "MatMul")->all.count, 2);
    analyze_profile_warnings(p, w, sizeof w);
    assert_non_null(strstr(w, "run_end says 9 ops ran, the trace holds 7"));
    analyze_profile_destroy(p);
    /* 11: base + duration wraps: impossible times, the record and the one after it */
    assert_int_equal(analyze_read(make_ops_trace("s3-wrap", 3, 11), NULL, &p), 0);
    assert_int_equal(p->diag.negative_time, 2);
    assert_int_equal(optype(p, "MatMul")->all.ns, 800);
    analyze_profile_destroy(p);
    /* 12: packed and exact records in one event: malformed */
    assert_int_equal(analyze_read(make_ops_trace("s3-both", 3, 12), NULL, &p), 0);
    assert_int_equal(p->diag.malformed_events, 1);
    assert_int_equal(p->ops_seen, 7);
    analyze_profile_destroy(p);
}

/* The split rule (tracer/opspack.h): a record 4.29 s or more after the one
 * before starts a new event, and one lasting that long or ending before it
 * begins goes exact; decoded, a schema-3 trace of such records reads as
 * they were. */
static void test_schema3_split(void **state)
{
    (void)state;
    const uint64_t S = 1000000000ull, M = UINT32_MAX;
    /* begin, end, and the event each starts (1: a new one) and its form */
    const struct {
        uint64_t b, e;
        int starts, packed;
    } r[] = {
        { 0, 400, 1, 1 },
        { M + 400, M + 401, 0, 1 },         /* a gap of 2^32 - 1: still packs */
        { 2 * M + 402, 3 * M + 402, 1, 1 }, /* a gap of 2^32: a new base; a duration of 2^32 - 1 */
        { 3 * M + 407, 4 * M + 408, 1, 0 }, /* a duration of 2^32: exact */
        { 4 * M + 418, 4 * M + 413, 0, 0 }, /* ends before it begins: exact too */
        { 4 * M + 518, 4 * M + 519, 1, 1 }, /* packs again */
        { 4 * M + 526, 4 * M + 826, 0, 1 },
    };
    enum { N = sizeof r / sizeof r[0] };
    const uint64_t t0 = 5000; /* the trace's first record */
    uint64_t b[N], e[N];
    uint32_t gap[N], dur[N], nodes[N];
    for (int i = 0; i < N; i++)
        b[i] = t0 + r[i].b, e[i] = t0 + r[i].e, nodes[i] = (uint32_t)i % 2;
    for (uint32_t i = 0; i < N;) {
        int packed;
        assert_int_equal(r[i].starts, 1);
        uint32_t k = tracer_ops_next(N - i, b + i, e + i, gap + i, dur + i, &packed);
        assert_true(k >= 1 && i + k <= N);
        assert_int_equal(packed, r[i].packed);
        uint64_t at = b[i]; /* the base */
        for (uint32_t j = i; j < i + k; j++) {
            assert_int_equal(r[j].packed, packed);
            assert_int_equal(r[j].starts, j == i);
            if (packed) {
                assert_int_equal(at + gap[j], b[j]);
                assert_int_equal(b[j] + dur[j], e[j]);
                at = e[j];
            }
        }
        i += k;
        assert_true(i == N || r[i].starts);
    }

    /* the same records in a trace: MatMul (node 0) and Relu (node 1) */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/s3-split", testdir_path);
    ctfgen_options o = { .nstreams = 1, .packed = 1 };
    ctfgen *g = ctfgen_create(dir, &o);
    assert_non_null(g);
    int mm = ctfgen_op(g, "MatMul"), relu = ctfgen_op(g, "Relu");
    uint32_t in[1] = { 1 }, out[1] = { 2 };
    assert_int_equal(ctfgen_run_begin(g, 1, S2_MAIN, 3, "mlp", CTFGEN_TRAIN, "tiny", 4, 1, 1, 1, 1), 0);
    assert_int_equal(
        ctfgen_node_def(g, 2, S2_MAIN, 0, 0, mm, CTFGEN_MATRIX, CTFGEN_FORWARD, 1, in, 1, out, 0, NULL, 1, 1), 0);
    assert_int_equal(
        ctfgen_node_def(g, 3, S2_MAIN, 0, 1, relu, CTFGEN_ELEMENTWISE, CTFGEN_FORWARD, 1, in, 1, out, 0, NULL, 1, 1),
        0);
    assert_int_equal(ctfgen_step_begin(g, 4, S2_MAIN, 0), 0);
    assert_int_equal(ctfgen_ops(g, t0 + 18 * S, S2_MAIN, 0, N, nodes, N, b, N, e), 0);
    assert_int_equal(ctfgen_step_end(g, t0 + 18 * S + 1, S2_MAIN, 0, 1.0), 0);
    assert_int_equal(ctfgen_run_end(g, t0 + 18 * S + 2, S2_MAIN, 0, N), 0);
    assert_int_equal(ctfgen_close(g), 0);
    analyze_profile *p = NULL;
    assert_int_equal(analyze_read(dir, NULL, &p), 0);
    assert_int_equal(p->meta.schema, 3);
    assert_int_equal(p->ops_seen, N);
    assert_int_equal(p->diag.malformed_events, 0);
    assert_int_equal(p->diag.negative_time, 1); /* the record that ends before it begins, as in schema 2 */
    uint64_t want[2] = { 0, 0 };
    for (int i = 0; i < N; i++)
        want[i % 2] += r[i].e > r[i].b ? r[i].e - r[i].b : 0;
    assert_int_equal(optype(p, "MatMul")->all.ns, want[0]);
    assert_int_equal(optype(p, "Relu")->all.ns, want[1]);
    analyze_profile_destroy(p);
}

static void test_unmatched(void **state)
{
    (void)state;
    scen s = { .run_begin = 1, .drop_end_every = 7, .stray_ends = 2 };
    analyze_profile *p = read_ok(make("unmatched", "conv", "alexnet", CTFGEN_TRAIN, 3, &s), 0, 0);
    assert_int_equal(p->diag.unmatched_begin, 36 / 7);
    assert_int_equal(p->diag.unmatched_end, 2);
    uint64_t count = 0;
    for (size_t i = 0; i < p->nops; i++)
        count += p->ops[i].all.count;
    assert_int_equal(count, 36 - 36 / 7);
    char w[2048];
    assert_int_equal(analyze_profile_warnings(p, w, sizeof w), 2);
    assert_non_null(strstr(w, "5 op_begin events without their op_end"));
    assert_non_null(strstr(w, "2 op_end events without their op_begin"));
    analyze_profile_destroy(p);
}

static void test_archive(void **state)
{
    (void)state;
    const char *dir = make("arch", "conv", "alexnet", CTFGEN_TRAIN, 3, NULL);
    char path[4300];
    snprintf(path, sizeof path, "%s/arch.tar.zst", testdir_path);
    tracer_manifest *m = tracer_manifest_create();
    assert_non_null(m);
    assert_int_equal(tracer_manifest_add(m, "schema", "1"), 0);
    assert_int_equal(tracer_manifest_add(m, "model", "alexnet"), 0);
    assert_int_equal(tracer_archive_write(path, dir, m), 0);
    tracer_manifest_destroy(m);
    analyze_profile *p = read_ok(path, 0, 0);
    check_counts(p, "conv", CTFGEN_TRAIN, 3);
    assert_string_equal(p->meta.model, "alexnet");
    analyze_profile_destroy(p);
    /* a trace without run_begin takes model and mode from the MANIFEST */
    scen s = { .run_begin = 0 };
    const char *dir2 = make("arch2", "conv", "ignored", CTFGEN_INFER, 2, &s);
    snprintf(path, sizeof path, "%s/arch2.tar.zst", testdir_path);
    m = tracer_manifest_create();
    assert_int_equal(tracer_manifest_add(m, "model", "vgg"), 0);
    assert_int_equal(tracer_manifest_add(m, "mode", "infer"), 0);
    assert_int_equal(tracer_archive_write(path, dir2, m), 0);
    tracer_manifest_destroy(m);
    p = read_ok(path, 0, 0);
    assert_string_equal(analyze_profile_model(p), "vgg");
    assert_string_equal(analyze_profile_mode(p), "infer");
    check_counts(p, "conv", CTFGEN_INFER, 2);
    analyze_profile_destroy(p);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    char path[4300];
    analyze_profile *p = NULL;
    snprintf(path, sizeof path, "%s/does-not-exist", testdir_path);
    assert_int_equal(analyze_read(path, NULL, &p), ANALYZE_ERR_INPUT);
    assert_true(strcmp(base_errmsg(), "no error") && !strchr(base_errmsg(), '\n'));
    snprintf(path, sizeof path, "%s/random.bin", testdir_path);
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 10000; i++)
        fputc((i * 7919 + 13) % 251, f);
    fclose(f);
    assert_int_equal(analyze_read(path, NULL, &p), ANALYZE_ERR_INPUT);
    assert_true(strcmp(base_errmsg(), "no error") && !strchr(base_errmsg(), '\n'));
    snprintf(path, sizeof path, "%s/empty-dir", testdir_path);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(analyze_read(path, NULL, &p), ANALYZE_ERR_INPUT);
    assert_true(strcmp(base_errmsg(), "no error") && !strchr(base_errmsg(), '\n'));
    /* a CTF directory whose stream file is garbage */
    const char *dir = make("garbage", "conv", "alexnet", CTFGEN_TRAIN, 2, NULL);
    snprintf(path, sizeof path, "%s/chan_0", dir);
    f = fopen(path, "r+b");
    fseek(f, 0, SEEK_SET);
    fputs("this is not a packet header", f);
    fclose(f);
    assert_int_equal(analyze_read(dir, NULL, &p), ANALYZE_ERR_INPUT);
    assert_true(strcmp(base_errmsg(), "no error") && !strchr(base_errmsg(), '\n'));
    assert_null(p);
}

/* ---- diff ------------------------------------------------------------------------------ */
/* A trace of `steps` steps that each run ops[0..n). */
static const char *make_ops(const char *name, const scen_op *ops, size_t n, const char *model, int mode, uint32_t steps)
{
    static char paths[8][4200];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, 4200, "%s/%s", testdir_path, name);
    scen s = { .model = model,
               .mode = mode,
               .steps = steps,
               .run_begin = 1,
               .ops = ops,
               .nops = n,
               .uuid_seed = 104729 + (uint64_t)next };
    assert_int_equal(scen_write(path, &s), 0);
    return path;
}

static const analyze_diff_row *diff_op(const analyze_diff *d, const char *name)
{
    for (size_t i = 0; i < d->nops; i++)
        if (strcmp(d->ops[i].name, name) == 0)
            return &d->ops[i];
    return NULL;
}

static const analyze_diff_row *diff_class(const analyze_diff *d, const char *name)
{
    for (size_t i = 0; i < d->nclasses; i++)
        if (strcmp(d->classes[i].name, name) == 0)
            return &d->classes[i];
    return NULL;
}

static char *diff_output(const analyze_diff *d, cli_format fmt, size_t top)
{
    capture c;
    assert_int_equal(analyze_diff_print(capture_open(&c), d, fmt, top), 0);
    return capture_close(&c);
}

/* The text report's row that starts with `start` ("\nName "), cut at its
 * end of line (buf is modified). */
static char *text_row(char *buf, const char *start)
{
    char *line = strstr(buf, start);
    assert_non_null(line);
    char *eol = strchr(line + 1, '\n');
    assert_non_null(eol);
    *eol = '\0';
    return line;
}

#define NEAR(x, y) assert_true(fabs((double)(x) - (double)(y)) < 1e-9 * (1 + fabs((double)(y))))

/* Per step, A: MatMul 1000 + 2000 (twice), Relu 100, Conv2D 500, ApplyAdam 400 (op time 4000);
 * B: MatMul 500 + 1000, Relu 300, Add 200, ApplyAdam 400 (op time 2400).  Conv2D only in A,
 * Add only in B.  A has 5 steps, the first skipped; B has 2. */
static const scen_op diff_a[] = {
    { "MatMul", CTFGEN_MATRIX, CTFGEN_FORWARD, 1000 },        { "Relu", CTFGEN_ELEMENTWISE, CTFGEN_FORWARD, 100 },
    { "Conv2D", CTFGEN_CONVOLUTION, CTFGEN_FORWARD, 500 },    { "MatMul", CTFGEN_MATRIX, CTFGEN_BACKWARD, 2000 },
    { "ApplyAdam", CTFGEN_OPTIMIZATION, CTFGEN_UPDATE, 400 },
};
static const scen_op diff_b[] = {
    { "MatMul", CTFGEN_MATRIX, CTFGEN_FORWARD, 500 },         { "Relu", CTFGEN_ELEMENTWISE, CTFGEN_FORWARD, 300 },
    { "Add", CTFGEN_ELEMENTWISE, CTFGEN_FORWARD, 200 },       { "MatMul", CTFGEN_MATRIX, CTFGEN_BACKWARD, 1000 },
    { "ApplyAdam", CTFGEN_OPTIMIZATION, CTFGEN_UPDATE, 400 },
};

static void test_diff(void **state)
{
    (void)state;
    analyze_profile *a = read_ok(make_ops("diff-a", diff_a, 5, "alexnet", CTFGEN_TRAIN, 5), 1, 0);
    analyze_profile *b = read_ok(make_ops("diff-b", diff_b, 5, "alexnet", CTFGEN_TRAIN, 2), 0, 0);
    analyze_diff *d = analyze_diff_create(a, b);
    assert_non_null(d);
    assert_int_equal(analyze_diff_mismatch(d, NULL, 0), 0);
    NEAR(d->a_per, 4);
    NEAR(d->b_per, 2);
    NEAR(d->a_step_ns, 40 + 10 * 5 + 4000); /* the fixture's step layout: see scenario.c */
    NEAR(d->b_step_ns, 40 + 10 * 5 + 2400);
    NEAR(d->step_ratio, 2490.0 / 4090.0);
    NEAR(d->a_op_ns, 4000);
    NEAR(d->b_op_ns, 2400);
    NEAR(d->op_ratio, 0.6);

    /* op types: the union, by |delta| (ties by name) */
    static const char *const order[] = { "MatMul", "Conv2D", "Add", "Relu", "ApplyAdam" };
    assert_int_equal(d->nops, 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(d->ops[i].name, order[i]);
    const analyze_diff_row *r = diff_op(d, "MatMul");
    assert_string_equal(r->cls, "matrix");
    assert_true(r->in_a && r->in_b);
    NEAR(r->a_ns, 3000);
    NEAR(r->b_ns, 1500);
    NEAR(r->ratio, 0.5);
    NEAR(r->delta_ns, -1500);
    NEAR(r->a_share, 0.75);
    NEAR(r->b_share, 0.625);
    NEAR(r->a_count, 2);
    NEAR(r->b_count, 2);
    r = diff_op(d, "Relu");
    NEAR(r->ratio, 3);
    NEAR(r->delta_ns, 200);
    NEAR(r->a_share, 0.025);
    NEAR(r->b_share, 0.125);
    r = diff_op(d, "ApplyAdam");
    NEAR(r->ratio, 1);
    NEAR(r->delta_ns, 0);
    r = diff_op(d, "Conv2D"); /* only in A */
    assert_true(r->in_a && !r->in_b);
    assert_string_equal(r->cls, "convolution");
    NEAR(r->a_ns, 500);
    NEAR(r->b_ns, 0);
    NEAR(r->b_count, 0);
    assert_true(isnan(r->ratio));
    NEAR(r->delta_ns, -500);
    r = diff_op(d, "Add"); /* only in B */
    assert_true(!r->in_a && r->in_b);
    assert_string_equal(r->cls, "elementwise");
    NEAR(r->a_ns, 0);
    NEAR(r->b_ns, 200);
    NEAR(r->b_count, 1);
    assert_true(isnan(r->ratio));
    NEAR(r->b_share, 200.0 / 2400.0);

    /* classes: shares of each side's op time and their difference in points */
    assert_int_equal(d->nclasses, 4);
    assert_string_equal(d->classes[0].name, "matrix");
    assert_string_equal(d->classes[1].name, "convolution");
    assert_string_equal(d->classes[2].name, "elementwise");
    assert_string_equal(d->classes[3].name, "optimization");
    r = diff_class(d, "matrix");
    NEAR(r->dshare_pp, -12.5);
    NEAR(r->ratio, 0.5);
    r = diff_class(d, "convolution");
    NEAR(r->dshare_pp, -12.5);
    assert_true(isnan(r->ratio));
    r = diff_class(d, "elementwise");
    NEAR(r->a_ns, 100);
    NEAR(r->b_ns, 500);
    NEAR(r->ratio, 5);
    NEAR(r->dshare_pp, 100 * (500.0 / 2400.0 - 0.025));
    r = diff_class(d, "optimization");
    NEAR(r->dshare_pp, 100 * (400.0 / 2400.0 - 0.1));
    double sa = 0, sb = 0, pp = 0;
    for (size_t i = 0; i < d->nclasses; i++)
        sa += d->classes[i].a_share, sb += d->classes[i].b_share, pp += d->classes[i].dshare_pp;
    NEAR(sa, 1);
    NEAR(sb, 1);
    assert_true(fabs(pp) < 1e-9);

    /* JSON: the documented layout, the numbers above, null ratios */
    char *buf = diff_output(d, CLI_JSON, 0);
    json_error_t e;
    json_t *j = json_loads(buf, 0, &e);
    free(buf);
    assert_non_null(j);
    static const char *const top[] = {
        "schema", "analysis", "a", "b", "step_ratio", "op_ratio", "op_types", "classes"
    };
    static const char *const side[] = { "source", "model", "mode",  "preset",  "threads",
                                        "blas",   "cpu",   "steps", "step_ns", "op_ns" };
    static const char *const ok[] = { "op",       "class",   "a_ns",    "b_ns",    "ratio",
                                      "delta_ns", "a_share", "b_share", "a_count", "b_count" };
    static const char *const ck[] = { "class", "a_ns", "b_ns", "ratio", "a_share", "b_share", "dshare_pp" };
    assert_keys(j, top, 8);
    assert_int_equal(json_integer_value(json_object_get(j, "schema")), 1);
    assert_string_equal(json_string_value(json_object_get(j, "analysis")), "diff");
    json_t *ja = json_object_get(j, "a"), *jb = json_object_get(j, "b");
    assert_keys(ja, side, 10);
    assert_keys(jb, side, 10);
    assert_string_equal(json_string_value(json_object_get(ja, "source")), a->source);
    assert_string_equal(json_string_value(json_object_get(jb, "model")), "alexnet");
    assert_string_equal(json_string_value(json_object_get(jb, "preset")), "tiny");
    assert_string_equal(json_string_value(json_object_get(jb, "cpu")), "Test CPU @ 1.0GHz");
    assert_int_equal(json_integer_value(json_object_get(ja, "threads")), 2);
    assert_int_equal(json_integer_value(json_object_get(ja, "steps")), 4);
    assert_int_equal(json_integer_value(json_object_get(jb, "steps")), 2);
    NEAR(json_real_value(json_object_get(ja, "op_ns")), 4000);
    NEAR(json_real_value(json_object_get(jb, "step_ns")), 2490);
    NEAR(json_real_value(json_object_get(j, "step_ratio")), 2490.0 / 4090.0);
    NEAR(json_real_value(json_object_get(j, "op_ratio")), 0.6);
    json_t *ops = json_object_get(j, "op_types"), *o;
    size_t i;
    assert_int_equal(json_array_size(ops), 5);
    json_array_foreach(ops, i, o)
    {
        assert_keys(o, ok, 10);
        assert_string_equal(json_string_value(json_object_get(o, "op")), order[i]);
        const analyze_diff_row *x = diff_op(d, order[i]);
        NEAR(json_real_value(json_object_get(o, "delta_ns")), x->delta_ns);
        NEAR(json_real_value(json_object_get(o, "a_share")), x->a_share);
        NEAR(json_real_value(json_object_get(o, "b_count")), x->b_count);
        if (isnan(x->ratio))
            assert_true(json_is_null(json_object_get(o, "ratio")));
        else
            NEAR(json_real_value(json_object_get(o, "ratio")), x->ratio);
    }
    json_t *m = json_array_get(ops, 0);
    assert_string_equal(json_string_value(json_object_get(m, "class")), "matrix");
    NEAR(json_real_value(json_object_get(m, "a_ns")), 3000);
    NEAR(json_real_value(json_object_get(m, "b_ns")), 1500);
    assert_true(json_is_null(json_object_get(json_array_get(ops, 1), "ratio"))); /* Conv2D */
    assert_true(json_is_null(json_object_get(json_array_get(ops, 2), "ratio"))); /* Add */
    json_t *cls = json_object_get(j, "classes");
    assert_int_equal(json_array_size(cls), 4);
    json_array_foreach(cls, i, o) assert_keys(o, ck, 7);
    json_t *el = json_array_get(cls, 2);
    assert_string_equal(json_string_value(json_object_get(el, "class")), "elementwise");
    NEAR(json_real_value(json_object_get(el, "dshare_pp")), 100 * (500.0 / 2400.0 - 0.025));
    NEAR(json_real_value(json_object_get(el, "ratio")), 5);
    assert_true(json_is_null(json_object_get(json_array_get(cls, 1), "ratio")));
    json_decref(j);

    /* text: the top rows, the rest summed, "-" for one-sided ratios */
    buf = diff_output(d, CLI_TEXT, 2);
    assert_non_null(strstr(buf, "4 steps kept"));
    assert_non_null(strstr(buf, "2 steps kept"));
    assert_non_null(strstr(buf, "(3 more op types)"));
    assert_null(strstr(buf, "\nRelu "));
    assert_non_null(strstr(text_row(buf, "\nConv2D "), " - "));
    free(buf);
    /* CSV: a header, two step rows, then op types and classes */
    buf = diff_output(d, CLI_CSV, 0);
    static const char header[] = "level,name,class,a_ns,b_ns,ratio,delta_ns,a_share,b_share,dshare_pp,a_count,"
                                 "b_count\n";
    assert_true(strncmp(buf, header, strlen(header)) == 0);
    assert_non_null(strstr(buf, "\nstep,op_ns,,4000.0,2400.0,0.600000,-1600.0,,,,,\n"));
    assert_non_null(strstr(buf, "\nop_type,MatMul,matrix,3000.0,1500.0,0.500000,-1500.0,0.750000000,0.625000000,"
                                "-12.500000,2.000,2.000\n"));
    assert_non_null(strstr(buf, "\nop_type,Add,elementwise,0.0,200.0,,200.0,"));
    assert_non_null(strstr(buf, "\nclass,convolution,convolution,500.0,0.0,,-500.0,"));
    free(buf);
    analyze_diff_destroy(d);

    /* the other way round: ratios invert, one-sided ops swap sides */
    d = analyze_diff_create(b, a);
    assert_non_null(d);
    NEAR(diff_op(d, "MatMul")->ratio, 2);
    assert_true(!diff_op(d, "Conv2D")->in_a && diff_op(d, "Conv2D")->in_b);
    NEAR(diff_class(d, "matrix")->dshare_pp, 12.5);
    analyze_diff_destroy(d);

    /* another mode is said */
    analyze_profile *c = read_ok(make_ops("diff-c", diff_b, 3, "alexnet", CTFGEN_INFER, 2), 0, 0);
    d = analyze_diff_create(a, c);
    char w[256];
    assert_int_equal(analyze_diff_mismatch(d, w, sizeof w), 1);
    assert_non_null(strstr(w, "alexnet/train"));
    assert_non_null(strstr(w, "alexnet/infer"));
    assert_null(strchr(w, '\n'));
    analyze_diff_destroy(d);
    analyze_profile_destroy(c);

    /* a trace without steps: its whole-trace totals */
    analyze_profile *n = analyze_profile_create("nosteps", 0, 0);
    assert_non_null(n);
    int mm = analyze_profile_intern_op(n, "MatMul", "matrix");
    assert_true(mm >= 0);
    for (uint64_t k = 0; k < 3; k++) {
        assert_int_equal(analyze_profile_op(n, 1000 * k, 1000 * k + 700, mm, ANALYZE_PHASE_FORWARD, 0, 0), 0);
    }
    analyze_profile_finish(n);
    d = analyze_diff_create(a, n);
    assert_non_null(d);
    NEAR(d->b_per, 1);
    NEAR(d->b_op_ns, 2100);
    assert_true(isnan(d->step_ratio));
    NEAR(d->op_ratio, 2100.0 / 4000.0);
    NEAR(diff_op(d, "MatMul")->b_ns, 2100);
    NEAR(diff_op(d, "MatMul")->b_count, 3);
    NEAR(diff_op(d, "MatMul")->b_share, 1);
    assert_int_equal(analyze_diff_mismatch(d, NULL, 0), 0); /* no model on one side: nothing to say */
    buf = diff_output(d, CLI_TEXT, 0);
    assert_non_null(strstr(buf, "B has no kept steps"));
    free(buf);
    buf = diff_output(d, CLI_JSON, 0);
    j = json_loads(buf, 0, &e);
    free(buf);
    assert_non_null(j);
    assert_true(json_is_null(json_object_get(j, "step_ratio")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "b"), "steps")), 0);
    assert_true(json_is_null(json_object_get(json_object_get(j, "b"), "threads")));
    assert_true(json_is_null(json_object_get(json_object_get(j, "b"), "preset")));
    json_decref(j);
    analyze_diff_destroy(d);
    analyze_profile_destroy(n);
    analyze_profile_destroy(a);
    analyze_profile_destroy(b);
}

/* ---- scaling ------------------------------------------------------------------------------ */
#define REL(x, y) assert_true(fabs((double)(x) - (double)(y)) <= 1e-6 * fabs((double)(y)) + 1e-12)

/* A trace at `threads` whose steps run MatMul t = 10 + 90/T us (serial fraction 0.1 at T0 = 1),
 * Conv2D 80/T us (perfectly parallel) and Relu 50 us (not parallel). */
static const char *make_scaling(const char *name, uint32_t threads, const char *model, int run_begin)
{
    static char paths[8][4200];
    static scen_op ops[8][3];
    static int next;
    int k = next++ % 8;
    snprintf(paths[k], 4200, "%s/%s", testdir_path, name);
    ops[k][0] = (scen_op){ "MatMul", CTFGEN_MATRIX, CTFGEN_FORWARD, 10000 + 90000 / threads };
    ops[k][1] = (scen_op){ "Conv2D", CTFGEN_CONVOLUTION, CTFGEN_FORWARD, 80000 / threads };
    ops[k][2] = (scen_op){ "Relu", CTFGEN_ELEMENTWISE, CTFGEN_FORWARD, 50000 };
    scen s = { .model = model,
               .mode = CTFGEN_TRAIN,
               .steps = 3,
               .run_begin = run_begin,
               .ops = ops[k],
               .nops = 3,
               .threads = threads,
               .uuid_seed = 7001 + (uint64_t)next };
    assert_int_equal(scen_write(paths[k], &s), 0);
    return paths[k];
}

static char *scaling_output(const analyze_scaling *sc, cli_format fmt, size_t top)
{
    capture c;
    assert_int_equal(analyze_scaling_print(capture_open(&c), sc, fmt, top), 0);
    return capture_close(&c);
}

static void test_amdahl_fit(void **state)
{
    (void)state;
    const uint32_t th[3] = { 1, 2, 4 };
    double a, b;
    const double exact[3] = { 100, 55, 32.5 };
    assert_int_equal(analyze_amdahl_fit(th, exact, 3, &a, &b), 0);
    REL(a, 10);
    REL(b, 90);
    assert_int_equal(analyze_amdahl_fit(th, exact, 2, &a, &b), 0); /* two points: exact */
    REL(a, 10);
    REL(b, 90);
    const double slower[3] = { 10, 12, 14 }; /* b < 0: clamped, all serial */
    assert_int_equal(analyze_amdahl_fit(th, slower, 3, &a, &b), 0);
    REL(a, 12);
    assert_true(b == 0);
    const double super[3] = { 100, 40, 10 }; /* a < 0: clamped, all parallel, b refitted */
    assert_int_equal(analyze_amdahl_fit(th, super, 3, &a, &b), 0);
    assert_true(a == 0);
    REL(b, 122.5 / 1.3125);
    const double gap[3] = { 100, NAN, 32.5 }; /* absent points are left out */
    assert_int_equal(analyze_amdahl_fit(th, gap, 3, &a, &b), 0);
    REL(a, 10);
    REL(b, 90);
    const double one[3] = { NAN, 5, NAN };
    assert_int_equal(analyze_amdahl_fit(th, one, 3, &a, &b), -1);
    assert_true(isnan(a) && isnan(b));
}

static void test_scaling(void **state)
{
    (void)state;
    analyze_profile *p[3];
    /* given out of order: sorted by thread count */
    p[0] = read_ok(make_scaling("sc-4", 4, "vgg", 1), 0, 0);
    p[1] = read_ok(make_scaling("sc-1", 1, "vgg", 1), 0, 0);
    p[2] = read_ok(make_scaling("sc-2", 2, "vgg", 1), 0, 0);
    analyze_scaling *sc = NULL;
    analyze_scaling_create(p, 3, &sc);
    assert_non_null(sc);
    assert_int_equal(analyze_scaling_mismatch(sc, NULL, 0), 0);
    assert_int_equal(sc->n, 3);
    assert_int_equal(sc->threads[0], 1);
    assert_int_equal(sc->threads[1], 2);
    assert_int_equal(sc->threads[2], 4);
    assert_ptr_equal(sc->p[0], p[1]);
    assert_ptr_equal(sc->p[2], p[0]);
    const double op[3] = { 230000, 145000, 102500 };
    for (size_t i = 0; i < 3; i++) {
        REL(sc->per[i], 3);
        REL(sc->total.ns[i], op[i]);
        REL(sc->step_ns[i], 70 + op[i]); /* the fixture's step layout: see scenario.c */
        REL(sc->step_speedup[i], (70 + op[0]) / (70 + op[i]));
        REL(sc->step_efficiency[i], (70 + op[0]) / (70 + op[i]) / sc->threads[i]);
        REL(sc->total.speedup[i], op[0] / op[i]);
        REL(sc->total.efficiency[i], op[0] / op[i] / sc->threads[i]);
    }
    /* total: 60 + 170/T us, exactly */
    REL(sc->total.a_ns, 60000);
    REL(sc->total.b_ns, 170000);
    REL(sc->total.serial_fraction, 60000.0 / 230000.0);
    REL(sc->total.limit_speedup, 230000.0 / 60000.0);

    /* op types by baseline time: MatMul 100, Conv2D 80, Relu 50 us */
    assert_int_equal(sc->nops, 3);
    const analyze_scaling_row *x = &sc->ops[0], *y = &sc->ops[1], *z = &sc->ops[2];
    assert_string_equal(x->name, "MatMul");
    assert_string_equal(x->cls, "matrix");
    assert_string_equal(y->name, "Conv2D");
    assert_string_equal(y->cls, "convolution");
    assert_string_equal(z->name, "Relu");
    REL(x->ns[0], 100000);
    REL(x->ns[1], 55000);
    REL(x->ns[2], 32500);
    REL(x->speedup[2], 100.0 / 32.5);
    REL(x->efficiency[2], 100.0 / 32.5 / 4);
    REL(x->a_ns, 10000);
    REL(x->b_ns, 90000);
    REL(x->serial_fraction, 0.1);
    REL(x->limit_speedup, 10);
    REL(y->speedup[1], 2);
    REL(y->speedup[2], 4);
    REL(y->efficiency[2], 1);
    assert_true(y->serial_fraction == 0);
    assert_true(isinf(y->limit_speedup));
    REL(z->speedup[2], 1);
    REL(z->efficiency[2], 0.25);
    REL(z->serial_fraction, 1);
    REL(z->limit_speedup, 1);
    /* classes: one op type each here, same numbers, same order */
    assert_int_equal(sc->nclasses, 3);
    assert_string_equal(sc->classes[0].name, "matrix");
    assert_string_equal(sc->classes[1].name, "convolution");
    assert_string_equal(sc->classes[2].name, "elementwise");
    REL(sc->classes[0].serial_fraction, 0.1);
    REL(sc->classes[0].speedup[2], 100.0 / 32.5);
    assert_true(sc->classes[1].serial_fraction == 0);
    REL(sc->classes[2].serial_fraction, 1);

    /* JSON: the documented layout and the numbers above; null for an infinite limit */
    char *buf = scaling_output(sc, CLI_JSON, 0);
    json_error_t e;
    json_t *j = json_loads(buf, 0, &e);
    free(buf);
    assert_non_null(j);
    static const char *const top[] = { "schema", "analysis", "traces", "threads", "op_types", "classes", "total" };
    static const char *const tk[] = { "source", "model", "mode", "threads", "steps", "step_ns", "op_ns" };
    static const char *const ok[] = { "op",          "class",           "ns",
                                      "speedup",     "efficiency",      "serial_ns",
                                      "parallel_ns", "serial_fraction", "limit_speedup" };
    static const char *const totk[] = { "ns",           "speedup",         "efficiency",    "serial_ns",
                                        "parallel_ns",  "serial_fraction", "limit_speedup", "step_ns",
                                        "step_speedup", "step_efficiency" };
    assert_keys(j, top, 7);
    assert_int_equal(json_integer_value(json_object_get(j, "schema")), 1);
    assert_string_equal(json_string_value(json_object_get(j, "analysis")), "scaling");
    json_t *th = json_object_get(j, "threads"), *tr = json_object_get(j, "traces"), *o;
    size_t i;
    assert_int_equal(json_array_size(th), 3);
    assert_int_equal(json_array_size(tr), 3);
    json_array_foreach(tr, i, o)
    {
        assert_keys(o, tk, 7);
        assert_int_equal(json_integer_value(json_array_get(th, i)), sc->threads[i]);
        assert_int_equal(json_integer_value(json_object_get(o, "threads")), sc->threads[i]);
        assert_int_equal(json_integer_value(json_object_get(o, "steps")), 3);
        assert_string_equal(json_string_value(json_object_get(o, "model")), "vgg");
        assert_string_equal(json_string_value(json_object_get(o, "source")), sc->p[i]->source);
        REL(json_real_value(json_object_get(o, "op_ns")), op[i]);
        REL(json_real_value(json_object_get(o, "step_ns")), 70 + op[i]);
    }
    json_t *ops = json_object_get(j, "op_types");
    assert_int_equal(json_array_size(ops), 3);
    json_array_foreach(ops, i, o)
    {
        assert_keys(o, ok, 9);
        assert_string_equal(json_string_value(json_object_get(o, "op")), sc->ops[i].name);
        assert_int_equal(json_array_size(json_object_get(o, "ns")), 3);
        for (size_t k = 0; k < 3; k++) {
            REL(json_real_value(json_array_get(json_object_get(o, "ns"), k)), sc->ops[i].ns[k]);
            REL(json_real_value(json_array_get(json_object_get(o, "speedup"), k)), sc->ops[i].speedup[k]);
        }
    }
    json_t *jx = json_array_get(ops, 0), *jy = json_array_get(ops, 1), *jz = json_array_get(ops, 2);
    assert_string_equal(json_string_value(json_object_get(jx, "class")), "matrix");
    REL(json_real_value(json_object_get(jx, "serial_fraction")), 0.1);
    REL(json_real_value(json_object_get(jx, "limit_speedup")), 10);
    REL(json_real_value(json_array_get(json_object_get(jx, "speedup"), 2)), 100.0 / 32.5);
    REL(json_number_value(json_object_get(jy, "serial_fraction")), 0);
    assert_true(json_is_null(json_object_get(jy, "limit_speedup")));
    REL(json_real_value(json_object_get(jz, "serial_fraction")), 1);
    REL(json_real_value(json_object_get(jz, "limit_speedup")), 1);
    json_t *cls = json_object_get(j, "classes");
    assert_int_equal(json_array_size(cls), 3);
    json_array_foreach(cls, i, o)
    {
        static const char *const ck[] = { "class",     "ns",          "speedup",         "efficiency",
                                          "serial_ns", "parallel_ns", "serial_fraction", "limit_speedup" };
        assert_keys(o, ck, 8);
        assert_string_equal(json_string_value(json_object_get(o, "class")), sc->classes[i].name);
    }
    json_t *tot = json_object_get(j, "total");
    assert_keys(tot, totk, 10);
    REL(json_real_value(json_object_get(tot, "serial_fraction")), 60000.0 / 230000.0);
    REL(json_real_value(json_array_get(json_object_get(tot, "ns"), 2)), 102500);
    REL(json_real_value(json_array_get(json_object_get(tot, "step_ns"), 1)), 70 + 145000);
    json_decref(j);

    /* text: a row per op type, the rest summed, inf for a perfectly parallel op */
    buf = scaling_output(sc, CLI_TEXT, 1);
    assert_non_null(strstr(buf, "== scaling: vgg/train at 1, 2, 4 threads"));
    assert_non_null(strstr(buf, "(2 more op types)"));
    assert_non_null(strstr(buf, "serial fraction 0.261"));
    assert_null(strstr(buf, "\nRelu "));
    char *line = text_row(buf, "\nMatMul ");
    assert_non_null(strstr(line, " 0.1000 "));
    assert_non_null(strstr(line, " 3.077    0.100   10.000"));
    free(buf);
    buf = scaling_output(sc, CLI_TEXT, 0);
    assert_non_null(strstr(text_row(buf, "\nConv2D "), " 4.000    0.000      inf"));
    free(buf);
    /* CSV: a header, then a row per (item, thread count) */
    buf = scaling_output(sc, CLI_CSV, 0);
    static const char header[] = "level,name,class,threads,ns,speedup,efficiency,serial_fraction,limit_speedup\n";
    assert_true(strncmp(buf, header, strlen(header)) == 0);
    assert_non_null(strstr(buf, "\nstep,step_ns,,4,102570.0,"));
    assert_non_null(strstr(buf, "\nstep,op_ns,,2,145000.0,1.586207,0.793103,0.260869565,3.833333\n"));
    assert_non_null(strstr(buf, "\nop_type,MatMul,matrix,4,32500.0,3.076923,0.769231,0.100000000,10.000000\n"));
    assert_non_null(strstr(buf, "\nop_type,Conv2D,convolution,1,80000.0,1.000000,1.000000,0.000000000,inf\n"));
    assert_non_null(strstr(buf, "\nclass,elementwise,elementwise,2,50000.0,1.000000,0.500000,1.000000000,1.000000\n"));
    size_t rows = 0;
    for (char *c = buf; *c; c++)
        rows += *c == '\n';
    assert_int_equal(rows, 1 + 3 * (2 + 3 + 3));
    free(buf);
    analyze_scaling_destroy(sc);

    /* two traces, baseline at 2 threads: the fit is exact, the fraction is at T0 = 2 */
    analyze_profile *two[2] = { p[0], p[2] };
    analyze_scaling_create(two, 2, &sc);
    assert_non_null(sc);
    assert_int_equal(sc->threads[0], 2);
    assert_string_equal(sc->ops[0].name, "MatMul");
    REL(sc->ops[0].a_ns, 10000);
    REL(sc->ops[0].b_ns, 90000);
    REL(sc->ops[0].serial_fraction, 10.0 / 55.0);
    REL(sc->ops[0].limit_speedup, 5.5);
    REL(sc->ops[0].speedup[1], 55.0 / 32.5);
    REL(sc->ops[0].efficiency[1], 55.0 / 32.5 / 2);
    REL(sc->total.serial_fraction, 60000.0 / 145000.0);
    REL(sc->step_efficiency[1], (70 + 145000.0) / (70 + 102500.0) / 2);
    analyze_scaling_destroy(sc);

    /* errors: a single trace, two traces at one thread count (both named), no threads value */
    assert_int_not_equal(analyze_scaling_create(p, 1, &(analyze_scaling *){ NULL }), ANALYZE_OK);
    assert_non_null(strstr(base_errmsg(), "at least two traces"));
    analyze_profile *dup = read_ok(make_scaling("sc-2b", 2, "vgg", 1), 0, 0);
    analyze_profile *d3[3] = { p[1], p[2], dup };
    assert_int_not_equal(analyze_scaling_create(d3, 3, &(analyze_scaling *){ NULL }), ANALYZE_OK);
    assert_non_null(strstr(base_errmsg(), p[2]->source));
    assert_non_null(strstr(base_errmsg(), dup->source));
    assert_non_null(strstr(base_errmsg(), "2 threads"));
    assert_null(strchr(base_errmsg(), '\n'));
    analyze_profile *nb = read_ok(make_scaling("sc-nobegin", 8, "vgg", 0), 0, 0);
    analyze_profile *d2[2] = { p[1], nb };
    assert_int_not_equal(analyze_scaling_create(d2, 2, &(analyze_scaling *){ NULL }), ANALYZE_OK);
    assert_non_null(strstr(base_errmsg(), nb->source));
    assert_non_null(strstr(base_errmsg(), "no threads value"));

    /* another model is said, in one line */
    analyze_profile *other = read_ok(make_scaling("sc-8", 8, "alexnet", 1), 0, 0);
    analyze_profile *mm[2] = { p[1], other };
    analyze_scaling_create(mm, 2, &sc);
    assert_non_null(sc);
    char w[512];
    assert_int_equal(analyze_scaling_mismatch(sc, w, sizeof w), 1);
    assert_non_null(strstr(w, "vgg/train"));
    assert_non_null(strstr(w, "alexnet/train"));
    assert_null(strchr(w, '\n'));
    analyze_scaling_destroy(sc);

    analyze_profile_destroy(other);
    analyze_profile_destroy(nb);
    analyze_profile_destroy(dup);
    for (size_t k = 0; k < 3; k++)
        analyze_profile_destroy(p[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_exact),
        cmocka_unit_test(test_skip_steps),
        cmocka_unit_test(test_profile_direct),
        cmocka_unit_test(test_breakdown_json),
        cmocka_unit_test(test_similarity),
        cmocka_unit_test(test_pairing),
        cmocka_unit_test(test_discarded_warns),
        cmocka_unit_test(test_foreign_provider),
        cmocka_unit_test(test_unknown_schema),
        cmocka_unit_test(test_unmatched),
        cmocka_unit_test(test_archive),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_amdahl_fit),
        cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_schema2),
        cmocka_unit_test(test_schema3),
        cmocka_unit_test(test_schema3_split),
        cmocka_unit_test(test_snapshot),
    };
    return cmocka_run_group_tests(tests, testdir_setup_all, testdir_teardown_all);
}
