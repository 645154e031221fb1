/* test_replay.c -- replay's program rebuilding and re-execution, on programs
 * taken from engine graphs the way a trace describes them (ids, op names,
 * phases, attrs): op for op the same invocations, the same outputs on the
 * same inputs, and clear errors for programs that do not resolve. Trace
 * decoding itself is tested with recorded traces in test_replay_trace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exec/build.h"
#include "exec/exec.h"
#include "replay/imported.h"
#include "replay/program.h"
#include "replay/run.h"

enum { B = 8, D = 13, H = 17, C = 5 };

static exec_graph *mlp(uint32_t *x, uint32_t *y, uint32_t *loss)
{
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 3), EXEC_OK);
    *x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ B, D });
    *y = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){ B });
    uint32_t w1 = exec_weight(g, "w1", 2, (int64_t[]){ D, H }, EXEC_INIT_GLOROT);
    uint32_t b1 = exec_weight(g, "b1", 1, (int64_t[]){ H }, EXEC_INIT_ZERO);
    uint32_t w2 = exec_weight(g, "w2", 2, (int64_t[]){ H, C }, EXEC_INIT_GLOROT);
    uint32_t h = ex_relu(g, ex_bias_add(g, ex_matmul(g, *x, w1, 0, 0), b1, 1));
    *loss = ex_sparse_softmax_xent(g, ex_matmul(g, h, w2, 0, 0), *y);
    exec_gradients(g, *loss);
    exec_optimizer_sgd(g, 0.05f);
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    return g;
}

/* What a trace of `steps` steps of g would describe. */
static void program_from_graph(replay_program *p, const exec_graph *g, int steps)
{
    assert_int_equal(replay_program_init(p), EXEC_OK);
    for (uint32_t id = 1; id <= exec_tensor_count(g); id++) {
        const exec_tensor *t = exec_tensor_get(g, id);
        replay_tensor rt = { .id = exec_trace_tensor_id(g, id), .role = t->role, .dtype = t->dtype, .ndim = t->ndim };
        memcpy(rt.shape, t->shape, sizeof rt.shape);
        assert_int_equal(replay_program_add_tensor(p, &rt), EXEC_OK);
    }
    for (int s = 0; s < steps; s++)
        for (uint32_t i = 0; i < exec_node_count(g); i++) {
            const exec_node *n = exec_node_get(g, i);
            uint32_t in[64], out[64];
            for (int k = 0; k < n->nin; k++)
                in[k] = exec_trace_tensor_id(g, n->in[k]);
            for (int k = 0; k < n->nout; k++)
                out[k] = exec_trace_tensor_id(g, n->out[k]);
            assert_int_equal(replay_program_add_op(p, exec_op_name(n->op), exec_phase_name(n->phase), (uint32_t)s,
                                                   n->nin, in, n->nout, out, n->nattrs, n->attrs, 1000),
                             EXEC_OK);
        }
    p->nsteps = (uint32_t)steps;
    p->rec_step_ns = (uint64_t)steps * 100000;
}

static void test_op_for_op(void **state)
{
    (void)state;
    uint32_t x, y, loss;
    exec_graph *g = mlp(&x, &y, &loss);
    replay_program p;
    program_from_graph(&p, g, 3);
    assert_int_equal(replay_program_build(&p, 9), EXEC_OK);
    /* the same invocations, in the same order, with the same shapes */
    assert_int_equal(exec_node_count(p.g), 3 * exec_node_count(g));
    for (uint32_t i = 0; i < exec_node_count(p.g); i++) {
        const exec_node *a = exec_node_get(p.g, i), *b = exec_node_get(g, i % exec_node_count(g));
        assert_int_equal(a->op, b->op);
        assert_int_equal(a->phase, b->phase);
        for (int k = 0; k < a->nout; k++) {
            const exec_tensor *ta = exec_tensor_get(p.g, a->out[k]), *tb = exec_tensor_get(g, b->out[k]);
            assert_int_equal(ta->numel, tb->numel);
            assert_int_equal(ta->ndim, tb->ndim);
        }
    }
    replay_opts o = { .iterations = 2, .warmup = 1 };
    replay_report r;
    assert_int_equal(replay_run(&p, &o, &r), EXEC_OK);
    assert_int_equal(r.ops_executed, 2ull * 3 * exec_node_count(g));
    assert_int_equal(r.steps, 3);
    double sum = 0;
    for (int i = 0; i < r.ntypes; i++)
        sum += r.types[i].rep_ns;
    assert_true(sum > 0 && sum <= r.rep_op_ns * 1.0001);
    printf("replayed %llu ops: %.1f us of ops per step (recorded %.1f us)\n", (unsigned long long)r.ops_executed,
           r.rep_op_ns / 1e3, r.rec_op_ns / 1e3);
    replay_program_destroy(&p);
    exec_graph_destroy(g);
}

/* Every pass starts from the state the build filled: a training program's
 * weights after four passes (one untimed, three timed) are those after
 * one, where each pass's SGD updates from synthetic gradients used to
 * carry over (autoenc's replayed weights went to Inf and NaN). */
static void test_passes_alike(void **state)
{
    (void)state;
    uint32_t x, y, loss;
    exec_graph *g = mlp(&x, &y, &loss);
    replay_program one, four;
    program_from_graph(&one, g, 3);
    program_from_graph(&four, g, 3);
    assert_int_equal(replay_program_build(&one, 9), EXEC_OK);
    assert_int_equal(replay_program_build(&four, 9), EXEC_OK);
    assert_true(one.nkept > 0); /* the weights, which SGD writes */
    replay_report r;
    assert_int_equal(replay_run(&one, &(replay_opts){ .iterations = 1, .threads = 1 }, &r), EXEC_OK);
    assert_int_equal(replay_run(&four, &(replay_opts){ .iterations = 3, .warmup = 1, .threads = 1 }, &r), EXEC_OK);
    int weights = 0;
    for (uint32_t id = 1; id <= exec_tensor_count(g); id++) {
        if (exec_tensor_get(g, id)->role != EXEC_ROLE_weight)
            continue;
        const exec_tensor *a = exec_tensor_get(one.g, one.tensors[id - 1].engine_id),
                          *b = exec_tensor_get(four.g, four.tensors[id - 1].engine_id);
        double diff = 0;
        for (int64_t i = 0; i < a->numel; i++) {
            const float u = ((const float *)a->data)[i], v = ((const float *)b->data)[i];
            assert_true(isfinite(u) && isfinite(v));
            diff = fmax(diff, fabs((double)u - (double)v));
        }
        print_message("weight %u: max diff after 1 and 4 passes %g\n", id, diff);
        assert_true(diff == 0);
        weights++;
    }
    assert_int_equal(weights, 3); /* w1, b1, w2 */
    replay_program_destroy(&one);
    replay_program_destroy(&four);
    exec_graph_destroy(g);
}

/* Deterministic forward ops on the same inputs give the engine's outputs. */
static void test_same_outputs(void **state)
{
    (void)state;
    uint32_t x, y, loss;
    exec_graph *g = mlp(&x, &y, &loss);
    replay_program p;
    program_from_graph(&p, g, 1);
    assert_int_equal(replay_program_build(&p, 9), EXEC_OK);
    /* labels were synthesized in range */
    const int32_t *ry = exec_datai(p.g, p.tensors[y - 1].engine_id);
    for (int i = 0; i < B; i++)
        assert_true(ry[i] >= 0 && ry[i] < C);
    /* copy every tensor the program reads before writing (inputs, weights) */
    for (uint32_t id = 1; id <= exec_tensor_count(g); id++) {
        exec_tensor *t = exec_tensor_get(g, id), *u = exec_tensor_get(p.g, p.tensors[id - 1].engine_id);
        if (t->role == EXEC_ROLE_input || t->role == EXEC_ROLE_weight)
            memcpy(u->data, t->data, t->bytes);
    }
    for (int i = 0; i < B * D; i++)
        exec_dataf(g, x)[i] = exec_dataf(p.g, p.tensors[x - 1].engine_id)[i] = (float)((i * 37) % 11) / 5.0f - 1.0f;
    for (int i = 0; i < B; i++)
        exec_datai(g, y)[i] = exec_datai(p.g, p.tensors[y - 1].engine_id)[i] = i % C;
    exec_run_opts fwd = { .max_phase = EXEC_PHASE_forward };
    assert_int_equal(exec_graph_run(g, &fwd), EXEC_OK);
    assert_int_equal(exec_graph_run(p.g, &fwd), EXEC_OK);
    for (uint32_t id = 1; id <= exec_tensor_count(g); id++) {
        exec_tensor *t = exec_tensor_get(g, id), *u = exec_tensor_get(p.g, p.tensors[id - 1].engine_id);
        if (t->role == EXEC_ROLE_activation)
            assert_memory_equal(t->data, u->data, t->bytes);
    }
    printf("forward outputs identical; loss %.6f\n", exec_dataf(g, loss)[0]);
    replay_program_destroy(&p);
    exec_graph_destroy(g);
}

static void test_bad_programs(void **state)
{
    (void)state;
    replay_program p;
    replay_program_init(&p);
    uint32_t in[2] = { 1, 2 }, out[1] = { 3 };
    assert_int_equal(replay_program_add_op(&p, "FancyNewOp", "forward", 0, 2, in, 1, out, 0, NULL, 1), EXEC_ERR_ARG);
    assert_non_null(strstr(exec_errmsg(), "FancyNewOp"));
    assert_int_equal(replay_program_add_op(&p, "MatMul", "sideways", 0, 2, in, 1, out, 0, NULL, 1), EXEC_ERR_ARG);
    replay_tensor t = { .id = 1, .role = EXEC_ROLE_input, .dtype = EXEC_F32, .ndim = 2, .shape = { 3, 4 } };
    assert_int_equal(replay_program_add_tensor(&p, &t), EXEC_OK);
    t.id = 2;
    t.shape[0] = 4;
    t.shape[1] = 5;
    assert_int_equal(replay_program_add_tensor(&p, &t), EXEC_OK);
    t.id = 3;
    t.shape[0] = 3;
    t.shape[1] = 6; /* MatMul of [3,4]x[4,5] is [3,5]: a lie */
    assert_int_equal(replay_program_add_tensor(&p, &t), EXEC_OK);
    assert_int_equal(replay_program_add_op(&p, "MatMul", "forward", 0, 2, in, 1, out, 2, (int64_t[]){ 0, 0 }, 1),
                     EXEC_OK);
    assert_int_equal(replay_program_build(&p, 1), EXEC_ERR_SHAPE);
    printf("lying shapes: %s\n", exec_errmsg());
    replay_program_destroy(&p);

    replay_program_init(&p);
    t = (replay_tensor){ .id = 1, .role = EXEC_ROLE_input, .dtype = EXEC_F32, .ndim = 1, .shape = { 4 } };
    assert_int_equal(replay_program_add_tensor(&p, &t), EXEC_OK);
    uint32_t dangling[1] = { 77 };
    assert_int_equal(replay_program_add_op(&p, "Relu", "forward", 0, 1, dangling, 1, out, 0, NULL, 1), EXEC_OK);
    assert_int_equal(replay_program_build(&p, 1), EXEC_ERR_ARG);
    assert_non_null(strstr(exec_errmsg(), "77"));
    printf("dangling id: %s\n", exec_errmsg());
    replay_program_destroy(&p);

    replay_program_init(&p);
    t = (replay_tensor){ .id = 1, .role = EXEC_ROLE_input, .dtype = EXEC_F32, .ndim = 7 };
    assert_int_equal(replay_program_add_tensor(&p, &t), EXEC_ERR_ARG);
    t = (replay_tensor){ .id = 1, .role = 99, .dtype = EXEC_F32, .ndim = 1, .shape = { 2 } };
    assert_int_equal(replay_program_add_tensor(&p, &t), EXEC_ERR_ARG);
    replay_program_destroy(&p);
}

/* Every framework op of the import table (tracer/import_ops.def), called
 * with arguments of random count, rank, size and attrs, as an imported trace
 * may describe them: the program builds and runs (under the sanitizers: no
 * kernel reads outside its tensors), each op replayed or demoted with a
 * reason; well-formed calls of the common ops are replayed. */
static const char *const fw_names[] = {
#define X(name, cls, engine, cost, attrs) name,
#include "tracer/import_ops.def"
#undef X
};

static void test_framework_table(void **state)
{
    (void)state;
    replay_program p;
    replay_program_init(&p);
    snprintf(p.rec.mode, sizeof p.rec.mode, "train");
    uint32_t next_id = 1, rng = 12345;
#define RND(n) (rng = rng * 1103515245u + 12345u, (int)((rng >> 16) % (uint32_t)(n)))
    static const int64_t dims[] = { 1, 2, 3, 4, 8 };
    size_t nfw = sizeof fw_names / sizeof fw_names[0];
    for (size_t f = 0; f < nfw; f++) {
        const replay_fw_op *fw = replay_fw_lookup(fw_names[f]);
        assert_non_null(fw);
        for (int c = 0; c < 24; c++) {
            uint32_t in[4];
            int nin = RND(5);
            for (int i = 0; i < nin; i++) {
                /* one draw a statement: in an initializer list the order of
                 * the draws would be unspecified */
                exec_dtype dtype = RND(2) ? EXEC_F32 : EXEC_I32;
                int ndim = 1 + RND(4);
                replay_tensor t = { .id = next_id++, .role = EXEC_ROLE_activation, .dtype = dtype, .ndim = ndim };
                for (int d = 0; d < t.ndim; d++)
                    t.shape[d] = dims[RND(5)];
                assert_int_equal(replay_program_add_tensor(&p, &t), EXEC_OK);
                in[i] = t.id;
            }
            int64_t attrs[6];
            int nattrs = (int[]){ 0, 2, 4, 6 }[RND(4)];
            for (int a = 0; a < nattrs; a++)
                attrs[a] = a < 2 && nattrs != 2 ? 1 + RND(3) : RND(2);
            assert_int_equal(replay_program_add_framework(&p, fw, c % 3 ? "forward" : "backward", 0, nin, in, 0, NULL,
                                                          nattrs, attrs, 1000),
                             EXEC_OK);
        }
    }
    /* well-formed calls: replayed */
    static const struct {
        const char *op;
        int nin;
        int ndim[3];
        int64_t shape[3][4];
        int nattrs;
        int64_t attrs[6];
    } ok[] = {
        { "aten::conv2d", 2, { 4, 4 }, { { 2, 3, 8, 8 }, { 4, 3, 3, 3 } }, 4, { 1, 1, 1, 1 } },
        { "aten::convolution_backward",
          3,
          { 4, 4, 4 },
          { { 2, 4, 8, 8 }, { 2, 3, 8, 8 }, { 4, 3, 3, 3 } },
          4,
          { 1, 1, 1, 1 } },
        { "aten::max_pool2d", 1, { 4 }, { { 2, 3, 8, 8 } }, 6, { 2, 2, 2, 2, 0, 0 } },
        { "aten::addmm", 3, { 1, 2, 2 }, { { 5 }, { 4, 3 }, { 3, 5 } }, 2, { 0, 0 } },
        { "aten::linear", 3, { 3, 2, 1 }, { { 2, 4, 3 }, { 5, 3 }, { 5 } }, 2, { 0, 1 } },
        { "aten::bmm", 2, { 3, 3 }, { { 2, 4, 3 }, { 2, 3, 5 } }, 0, { 0 } },
        { "aten::batch_norm", 1, { 4 }, { { 2, 3, 4, 4 } }, 0, { 0 } },
        { "aten::embedding", 2, { 2, 2 }, { { 10, 4 }, { 2, 3 } }, 0, { 0 } },
        { "aten::relu", 1, { 2 }, { { 3, 4 } }, 0, { 0 } },
        { "aten::softmax", 1, { 2 }, { { 3, 4 } }, 0, { 0 } },
    };
    uint32_t first_ok = p.nops;
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        uint32_t in[3];
        for (int i = 0; i < ok[k].nin; i++) {
            replay_tensor t = { .id = next_id++,
                                .role = EXEC_ROLE_activation,
                                .dtype = strcmp(ok[k].op, "aten::embedding") == 0 && i == 1 ? EXEC_I32 : EXEC_F32,
                                .ndim = ok[k].ndim[i] };
            memcpy(t.shape, ok[k].shape[i], sizeof ok[k].shape[i]);
            assert_int_equal(replay_program_add_tensor(&p, &t), EXEC_OK);
            in[i] = t.id;
        }
        assert_int_equal(replay_program_add_framework(&p, replay_fw_lookup(ok[k].op), "forward", 0, ok[k].nin, in, 0,
                                                      NULL, ok[k].nattrs, ok[k].attrs, 1000),
                         EXEC_OK);
    }
    p.nsteps = 1;
    p.rec_step_ns = 1000ull * p.nops;
    assert_int_equal(replay_program_build(&p, 5), EXEC_OK);
    uint32_t replayed = 0;
    for (uint32_t k = 0; k < p.nops; k++) {
        assert_true(p.ops[k].nnodes > 0 || p.ops[k].why);
        assert_true(p.ops[k].nnodes == 0 || !p.ops[k].why);
        replayed += p.ops[k].nnodes > 0;
        if (k >= first_ok && !p.ops[k].nnodes)
            fail_msg("%s (well-formed) demoted: %s", p.ops[k].fw->name, p.ops[k].why);
    }
    assert_int_equal(p.ops[first_ok + 1].nnodes, 2); /* both gradients of a convolution */
    replay_opts o = { .iterations = 1, .warmup = 0 };
    replay_report r;
    assert_int_equal(replay_run(&p, &o, &r), EXEC_OK);
    assert_int_equal(r.rec_ops, p.nops);
    assert_int_equal(r.rep_ops, replayed);
    assert_true(fabs(r.rec_op_ns + r.demoted_rec_ns - 1000.0 * p.nops) < 1e-6);
    printf("%zu framework ops x 24 random calls: %u of %u replayed, %u demoted op types\n", nfw, replayed, p.nops,
           r.demoted_types);
    replay_program_destroy(&p);
#undef RND
}

/* Each call that the planners' table refuses, with its reason: a layout
 * the engine op's planner does not take, too few input shapes, other than
 * the attributes it needs; a call that fits is planned. */
static void test_framework_reasons(void **state)
{
    (void)state;
    static const replay_fw_arg x4 = { 4, { 2, 3, 8, 8 } }, w4 = { 4, { 4, 3, 3, 3 } }, v1 = { 1, { 5 } };
    static const int64_t a6[6] = { 2, 2, 2, 2, 0, 0 };
    static const struct {
        const char *op;
        int nin;
        const replay_fw_arg *in[2];
        int nattrs;
        const char *why; /* a word of the reason; NULL: planned */
    } cases[] = {
        { "aten::conv2d", 2, { &x4, &w4 }, 4, NULL },
        { "aten::conv2d", 2, { &x4, &w4 }, 0, "not recorded" },        /* stride, padding: R_NO_ATTRS */
        { "aten::conv2d", 1, { &x4 }, 4, "shapes not recorded" },      /* R_NO_SHAPES */
        { "aten::index_select", 2, { &x4, &v1 }, 0, "not derivable" }, /* Gather of another layout */
        { "aten::embedding", 2, { &x4, &v1 }, 0, NULL },
        { "aten::max_pool2d", 1, { &x4 }, 6, NULL },
        { "aten::max_pool2d", 1, { &x4 }, 5, "not recorded" },
        { "aten::max_pool2d", 0, { NULL }, 6, "shapes not recorded" },
        { "aten::relu", 0, { NULL }, 0, "shapes not recorded" },
        { "aten::relu", 1, { &x4 }, 0, NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const replay_fw_op *fw = replay_fw_lookup(cases[i].op);
        assert_non_null(fw);
        replay_fw_arg in[2];
        for (int k = 0; k < cases[i].nin; k++)
            in[k] = *cases[i].in[k];
        static replay_fw_plan plan;
        const char *why = replay_fw_plan_of(fw, cases[i].nin, in, 0, NULL, cases[i].nattrs, a6, 1, &plan);
        if (cases[i].why ? !why || !strstr(why, cases[i].why) || plan.nnodes != 0 : why || plan.nnodes < 1)
            fail_msg("%s, %d inputs, %d attrs: '%s' (%d nodes), want %s", cases[i].op, cases[i].nin, cases[i].nattrs,
                     why ? why : "planned", plan.nnodes, cases[i].why ? cases[i].why : "planned");
    }
}

/* 64 relus, each on tensors of its own (1 MiB in, 1 MiB out): 128 MiB
 * in all, 2 MiB live at once. */
static void relu_chain(replay_program *p)
{
    replay_program_init(p);
    const replay_fw_op *fw = replay_fw_lookup("aten::relu");
    assert_non_null(fw);
    for (uint32_t k = 0; k < 64; k++) {
        uint32_t in = 2 * k + 1, out = 2 * k + 2;
        replay_tensor t = {
            .id = in, .role = EXEC_ROLE_activation, .dtype = EXEC_F32, .ndim = 1, .shape = { 1 << 18 }
        };
        assert_int_equal(replay_program_add_tensor(p, &t), EXEC_OK);
        t.id = out;
        assert_int_equal(replay_program_add_tensor(p, &t), EXEC_OK);
        assert_int_equal(replay_program_add_framework(p, fw, "forward", 0, 1, &in, 1, &out, 0, NULL, 1000), EXEC_OK);
    }
}

/* Replay memory is planned from tensor lifetimes: a trace whose tensors
 * sum past the limit but whose live peak fits replays; one whose peak does
 * not fit is refused with the peak and --ops offered. */
static void test_live_memory(void **state)
{
    (void)state;
    replay_program p;
    relu_chain(&p);
    exec_memory_limit_set(16 << 20);
    assert_int_equal(replay_program_build(&p, 1), EXEC_OK);
    uint32_t run = 0;
    for (uint32_t k = 0; k < p.nops; k++)
        run += p.ops[k].nnodes == 1;
    assert_int_equal(run, 64);
    replay_program_destroy(&p);

    relu_chain(&p);
    exec_memory_limit_set(3 << 19); /* 1.5 MiB */
    assert_int_equal(replay_program_build(&p, 1), EXEC_ERR_NOMEM);
    printf("live peak over the limit: %s\n", exec_errmsg());
    assert_non_null(strstr(exec_errmsg(), "peak at 2.0 MiB"));
    assert_non_null(strstr(exec_errmsg(), "--ops A-B"));
    replay_program_destroy(&p);

    relu_chain(&p); /* a range of it fits no better: its peak is one op's */
    assert_int_equal(replay_program_keep_ops(&p, 3, 10), EXEC_OK);
    assert_int_equal(p.nops, 8);
    assert_int_equal(replay_program_keep_ops(&p, 9, 9), EXEC_ERR_ARG);
    replay_program_destroy(&p);
    exec_memory_limit_set(0);
}

/* A recording's program (engine ops) whose tensors sum past the limit but
 * whose live ranges do not: two steps of a chain of CH MatMuls on 256 KiB
 * tensors of their own, t[k+1] = t[k] W with W a shift of columns (26
 * tensors, 6.5 MiB; live at once: x, W and two of the chain). Under a 4
 * MiB limit it is refused where every tensor has a buffer of its own, and
 * replays with the intermediates laid out by lifetimes in 1 MiB (x, W,
 * two buffers), its result x shifted CH columns, exactly, with one worker
 * or two (the executor orders the nodes sharing a buffer). */
#define CH 24
#define CN 256
static void matmul_chain(replay_program *p)
{
    replay_program_init(p);
    replay_tensor t = { .id = 1, .role = EXEC_ROLE_input, .dtype = EXEC_F32, .ndim = 2, .shape = { CN, CN } };
    assert_int_equal(replay_program_add_tensor(p, &t), EXEC_OK);
    t.id = 2, t.role = EXEC_ROLE_weight;
    assert_int_equal(replay_program_add_tensor(p, &t), EXEC_OK);
    t.role = EXEC_ROLE_activation;
    for (t.id = 3; t.id < 3 + CH; t.id++)
        assert_int_equal(replay_program_add_tensor(p, &t), EXEC_OK);
    int64_t attrs[2] = { 0, 0 };
    for (uint32_t step = 0; step < 2; step++)
        for (uint32_t k = 0; k < CH; k++) {
            uint32_t in[2] = { k ? 2 + k : 1, 2 }, out = 3 + k;
            assert_int_equal(replay_program_add_op(p, "MatMul", "forward", step, 2, in, 1, &out, 2, attrs, 1000),
                             EXEC_OK);
        }
    p->nsteps = 2;
}

static void test_live_memory_recording(void **state)
{
    (void)state;
    replay_program p;
    matmul_chain(&p);
    exec_memory_limit_set(4 << 20);
    assert_int_equal(replay_program_build(&p, 1), EXEC_ERR_NOMEM);
    printf("buffers of their own: %s\n", exec_errmsg());
    replay_program_destroy(&p);

    matmul_chain(&p);
    p.reuse = 1;
    assert_int_equal(replay_program_build(&p, 1), EXEC_OK);
    exec_mem_stats m;
    exec_graph_mem(p.g, &m);
    size_t planned = 0, sum = 0;
    for (int r = 0; r < EXEC_ROLE_COUNT; r++)
        planned += m.arena[r], sum += m.bytes[r];
    printf("laid out by lifetimes: %zu bytes for %zu\n", planned, sum - m.peak_workspace);
    assert_int_equal(planned, 4 * CN * CN * sizeof(float));
    assert_int_equal(sum - m.peak_workspace, (2 + CH) * CN * CN * sizeof(float));
    for (int inter = 1; inter <= 2; inter++) {
        float *x = exec_dataf(p.g, p.tensors[0].engine_id), *w = exec_dataf(p.g, p.tensors[1].engine_id);
        for (int i = 0; i < CN * CN; i++)
            x[i] = (float)(i % 1000) - 500.0f, w[i] = 0;
        for (int i = 0; i < CN; i++)
            w[i * CN + (i + 1) % CN] = 1; /* column i goes to i + 1 */
        exec_run_opts ro = { .inter = inter, .max_phase = EXEC_PHASE_forward };
        assert_int_equal(exec_graph_run(p.g, &ro), EXEC_OK);
        const float *y = exec_dataf(p.g, p.tensors[1 + CH].engine_id);
        x = exec_dataf(p.g, p.tensors[0].engine_id);
        for (int i = 0; i < CN; i++)
            for (int j = 0; j < CN; j++)
                assert_true(y[i * CN + j] == x[i * CN + (j + CN - CH) % CN]);
    }
    replay_program_destroy(&p);
    exec_memory_limit_set(0);
}

int main(void)
{
    exec_threads_set(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_for_op),       cmocka_unit_test(test_same_outputs),
        cmocka_unit_test(test_passes_alike),    cmocka_unit_test(test_bad_programs),
        cmocka_unit_test(test_framework_table), cmocka_unit_test(test_framework_reasons),
        cmocka_unit_test(test_live_memory),     cmocka_unit_test(test_live_memory_recording),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
