/* trace_mlp.c -- a test helper: a tiny MLP on the engine, traced through the
 * real recorder (tracer/record.h) until the workloads exist.
 *
 *   trace_mlp run STEPS [INTER [infer|long]]
 *                                    the workload: builds a 2-layer MLP and
 *                                    runs STEPS training steps (or, with
 *                                    infer, forward passes alone: a chain of
 *                                    ops), calling the exec_trace_* functions
 *                                    as `fathom run` does; traces itself when
 *                                    FATHOM_TRACE=1. With long, after the
 *                                    steps a thread of its own hands the
 *                                    provider's ops hook records seconds
 *                                    apart and long (tracer/opspack.h's
 *                                    cases), and writes them to the file
 *                                    TRACE_MLP_LONG names, one "node begin
 *                                    end" a line
 *   trace_mlp record [-o PATH] [--dir DIR] [--relay URL] STEPS [INTER [infer]]
 *                                    records `trace_mlp run` with
 *                                    tracer_record(), the code behind
 *                                    `fathom record`; prints the archive
 *   trace_mlp alive                  prints 1 if a session daemon answers
 *   trace_mlp sessions               lists the sessions named fathom-*
 *   trace_mlp extract ARCHIVE DIR    extracts an archive (libarchive, secure)
 *
 * record also takes --subbuf BYTES and --nsubbuf N (small buffers force the
 * blocking path: the tracer waits rather than discards), and --discard 1
 * (a channel that discards instead: the negative control of that test).
 */
#include "base/clock.h"
#include "exec/build.h"
#include "exec/exec.h"
#include "tracer/hooks.h"
#include "tracer/record.h"

#include <archive.h>
#include <archive_entry.h>
#include <limits.h>
#include <lttng/lttng.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The long records: ops of graph g on a thread of its own (whose first
 * ops event bounds nothing), from 20 s ago to 2.8 s ago. */
struct long_ops {
    const exec_graph *g;
    int rc;
    uint32_t n; /* records handed to the hook */
};

static void *long_thread(void *arg)
{
    struct long_ops *L = arg;
    const uint64_t S = 1000000000ull, M = UINT32_MAX;
    const struct {
        uint64_t b, e;
    } r[] = {
        { 0, 400 },                   /* packed, the base */
        { M + 400, M + 401 },         /* a gap of 2^32 - 1: still packed */
        { 2 * M + 402, 3 * M + 402 }, /* a gap of 2^32: a new event; a duration of 2^32 - 1 */
        { 3 * M + 407, 4 * M + 408 }, /* a duration of 2^32: exact */
        { 4 * M + 418, 4 * M + 413 }, /* ends before it begins: exact */
        { 4 * M + 518, 4 * M + 519 }, /* packed again */
        { 4 * M + 526, 4 * M + 826 },
    };
    enum { N = sizeof r / sizeof r[0] };
    uint64_t now = base_now_ns(), b[N], e[N];
    uint32_t nodes[N];
    const char *path = getenv("TRACE_MLP_LONG");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (now < 20 * S || !f) {
        fprintf(stderr, "trace_mlp: long: %s\n", f ? "the clock is under 20 s" : "TRACE_MLP_LONG names no file");
        if (f)
            fclose(f);
        L->rc = 1;
        return NULL;
    }
    for (int i = 0; i < N; i++) {
        b[i] = now - 20 * S + r[i].b, e[i] = now - 20 * S + r[i].e, nodes[i] = (uint32_t)i % 2;
        fprintf(f, "%u %llu %llu\n", nodes[i], (unsigned long long)b[i], (unsigned long long)e[i]);
    }
    L->rc = fclose(f) != 0;
    const exec_hooks *h = tracer_hooks_table();
    h->ops(h->ctx, L->g, N, nodes, b, e);
    L->n = N;
    return NULL;
}

/* The run's end after the long records: run_end counts them too. */
static exec_status long_ops(const exec_graph *g, exec_status st)
{
    struct long_ops L = { g, 0, 0 };
    pthread_t t;
    if (!st && (pthread_create(&t, NULL, long_thread, &L) != 0 || (pthread_join(t, NULL), L.rc)))
        st = EXEC_ERR_ARG;
    /* the main thread's buffer went out with its last graph run: nothing to flush first */
    const exec_hooks *h = exec_hooks_cur();
    if (h && h->run_end)
        h->run_end(h->ctx, (int32_t)st, exec_ops_dispatched() + L.n);
    return st;
}

static int run(int steps, int inter, int infer, int longs)
{
    int traced = 0;
    if (tracer_hooks_install_from_env(&traced) != TRACER_OK) {
        fprintf(stderr, "trace_mlp: %s\n", base_errmsg());
        return 1;
    }
    enum { B = 17, D = 33, H = 29, C = 7 };
    exec_graph *g = NULL;
    if (exec_graph_create(&g, 42))
        return 1;
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ B, D });
    uint32_t y = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){ B });
    uint32_t w1 = exec_weight(g, "w1", 2, (int64_t[]){ D, H }, EXEC_INIT_GLOROT);
    uint32_t b1 = exec_weight(g, "b1", 1, (int64_t[]){ H }, EXEC_INIT_ZERO);
    uint32_t w2 = exec_weight(g, "w2", 2, (int64_t[]){ H, C }, EXEC_INIT_GLOROT);
    uint32_t b2 = exec_weight(g, "b2", 1, (int64_t[]){ C }, EXEC_INIT_ZERO);
    uint32_t h = ex_relu(g, ex_bias_add(g, ex_matmul(g, x, w1, 0, 0), b1, 1));
    uint32_t logits = ex_bias_add(g, ex_matmul(g, h, w2, 0, 0), b2, 1);
    uint32_t loss = ex_sparse_softmax_xent(g, logits, y);
    if ((!infer && (exec_gradients(g, loss) || exec_optimizer_sgd(g, 0.1f))) || exec_graph_status(g) ||
        exec_graph_plan(g)) {
        fprintf(stderr, "trace_mlp: %s\n", exec_errmsg());
        exec_graph_destroy(g);
        return 1;
    }
    exec_run_info info = {
        .model = "mlp",
        .mode = infer ? "infer" : "train",
        .preset = "tiny",
        .version = FATHOM_VERSION,
        .blas = exec_blas_config(),
        .cpu = exec_cpu_model(),
        .batch = B,
        .steps = (uint32_t)steps,
        .threads = (uint32_t)exec_threads_get(),
        .inter = (uint32_t)inter,
        .seed = 42,
    };
    exec_trace_run_begin(&info);
    exec_run_opts opts = { .inter = inter, .max_phase = infer ? EXEC_PHASE_forward : EXEC_PHASE_update };
    exec_status st = EXEC_OK;
    float *xd = exec_dataf(g, x);
    int32_t *yd = exec_datai(g, y);
    for (int s = 0; s < steps && !st; s++) {
        exec_trace_step_begin((uint32_t)s);
        for (int i = 0; i < B * D; i++)
            xd[i] = (float)((i * 7 + s * 3) % 11) / 11.0f - 0.5f;
        for (int i = 0; i < B; i++)
            yd[i] = (i + s) % C;
        st = exec_graph_run(g, &opts);
        float l = exec_dataf(g, loss)[0];
        exec_trace_step_end((uint32_t)s, (double)l);
        if (!isfinite(l))
            st = EXEC_ERR_NUMERIC;
    }
    if (longs)
        st = long_ops(g, st);
    else
        exec_trace_run_end((int32_t)st);
    printf("mlp: %d steps, %llu ops, status %s\n", steps, (unsigned long long)exec_ops_dispatched(),
           exec_status_str(st));
    exec_graph_destroy(g);
    return st ? 1 : 0;
}

static int sessions(void)
{
    struct lttng_session *list = NULL;
    int n = lttng_list_sessions(&list);
    if (n < 0) {
        /* no session daemon: no sessions */
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (!strncmp(list[i].name, "fathom-", 7))
            printf("%s\n", list[i].name);
    free(list);
    return 0;
}

static int extract(const char *path, const char *dir)
{
    struct archive *a = archive_read_new(), *w = archive_write_disk_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_all(a);
    archive_write_disk_set_options(w, ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                          ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
    int rc = 1;
    if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK || chdir(dir) != 0)
        goto end;
    struct archive_entry *e;
    int r;
    while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK)
        if (archive_read_extract2(a, e, w) != ARCHIVE_OK)
            goto end;
    rc = r == ARCHIVE_EOF ? 0 : 1;
end:
    if (rc)
        fprintf(stderr, "trace_mlp extract: %s\n", archive_error_string(a) ? archive_error_string(a) : "failed");
    archive_read_free(a);
    archive_write_free(w);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "sessions"))
        return sessions();
    if (argc == 4 && !strcmp(argv[1], "extract"))
        return extract(argv[2], argv[3]);
    if (argc >= 3 && !strcmp(argv[1], "run"))
        return run(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 1, argc > 4 && !strcmp(argv[4], "infer"),
                   argc > 4 && !strcmp(argv[4], "long"));
    if (argc == 2 && !strcmp(argv[1], "alive")) {
        printf("%d\n", tracer_sessiond_alive());
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "record")) {
        const char *out = NULL, *dir = NULL, *relay = NULL;
        size_t subbuf = 0, nsubbuf = 0;
        int discard = 0;
        int i = 2;
        for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
            if (!strcmp(argv[i], "-o"))
                out = argv[i + 1];
            else if (!strcmp(argv[i], "--dir"))
                dir = argv[i + 1];
            else if (!strcmp(argv[i], "--relay"))
                relay = argv[i + 1];
            else if (!strcmp(argv[i], "--subbuf"))
                subbuf = (size_t)atol(argv[i + 1]);
            else if (!strcmp(argv[i], "--discard"))
                discard = atoi(argv[i + 1]);
            else if (!strcmp(argv[i], "--nsubbuf"))
                nsubbuf = (size_t)atol(argv[i + 1]);
            else
                break;
        }
        if (i >= argc) {
            fprintf(stderr, "trace_mlp record: STEPS missing\n");
            return 2;
        }
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return 1;
        exe[n] = '\0';
        char *cargv[] = {
            exe, "run", argv[i], i + 1 < argc ? argv[i + 1] : "1", i + 2 < argc ? argv[i + 2] : NULL, NULL
        };
        tracer_record_opts o = { .argv = cargv,
                                 .out_path = out,
                                 .out_dir = dir,
                                 .relay_url = relay,
                                 .label = "mlp",
                                 .progress = 1,
                                 .subbuf_size = subbuf,
                                 .num_subbuf = nsubbuf,
                                 .discard = discard };
        static tracer_record_result r;
        tracer_record_status st = tracer_record(&o, &r);
        const char *err = base_errmsg();
        if (st != TRACER_RECORD_OK) {
            fprintf(stderr, "trace_mlp record: %s\n", err);
            return st == TRACER_RECORD_INTERRUPTED ? 128 + (r.interrupted ? r.interrupted : SIGINT) : 1;
        }
        if (relay)
            printf("session %s\n", r.session);
        else
            printf("%s\n", r.archive);
        fprintf(stderr, "trace_mlp record: %llu events, %llu op pairs, %llu discarded\n",
                (unsigned long long)r.stats.events, (unsigned long long)r.stats.op_pairs,
                (unsigned long long)r.stats.discarded_events);
        if (r.sessiond_pid)
            fprintf(stderr, "trace_mlp record: started lttng-sessiond %d\n", r.sessiond_pid);
        return 0;
    }
    fprintf(stderr, "usage: trace_mlp run STEPS [INTER] | record [-o PATH] [--dir DIR] [--relay URL] STEPS [INTER]\n"
                    "       | alive | sessions | extract ARCHIVE DIR\n");
    return 2;
}
