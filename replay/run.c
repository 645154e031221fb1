/* run.c -- re-executes a rebuilt program, timing every node, and sets the
 * replayed times beside the recorded ones per op type and class.
 *
 * Passes run through exec_graph_run (the engine's one dispatch point). A
 * pass that must be watched -- the one that writes the op dump, or every
 * pass of a traced replay -- runs with hooks of its own (exec_settings.hooks,
 * their state a watch object of this replay) wrapping the process's (the
 * tracer's): it marks recorded step boundaries with step_begin/step_end and
 * writes the dump, then forwards every event. */
#include "replay/run.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "replay/imported.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void dump_shape(FILE *f, const exec_tensor *t)
{
    if (!t || t->ndim == 0) {
        fputs(t ? " scalar" : " ?", f);
        return;
    }
    for (int d = 0; d < t->ndim; d++)
        fprintf(f, "%c%lld", d ? 'x' : ' ', (long long)t->shape[d]);
}

void replay_dump_line(FILE *f, const exec_graph *g, const exec_node *n)
{
    fprintf(f, "%s %s", exec_op_name(n->op), exec_phase_name(n->phase));
    for (int i = 0; i < n->nin; i++)
        dump_shape(f, exec_tensor_get(g, n->in[i]));
    fputs(" ->", f);
    for (int i = 0; i < n->nout; i++)
        dump_shape(f, exec_tensor_get(g, n->out[i]));
    fputs(" :", f);
    for (int i = 0; i < n->nattrs; i++)
        fprintf(f, " %lld", (long long)n->attrs[i]);
    fputc('\n', f);
}

/* ---- the watching hooks: one watch per replay_run ------------------------ */
typedef struct watch {
    exec_hooks inner; /* the process's hook set (the tracer's), forwarded to */
    int traced;       /* inner exists: mark steps */
    FILE *dump;       /* this pass's dump, or NULL */
    pthread_mutex_t lock;
} watch;

/* Writes the dump lines of a batch of executed nodes, then forwards it. */
static void w_ops(void *ctx, const exec_graph *g, uint32_t n, const uint32_t *nodes, const uint64_t *begins,
                  const uint64_t *ends)
{
    watch *w = ctx;
    if (w->dump) {
        pthread_mutex_lock(&w->lock);
        for (uint32_t i = 0; i < n; i++)
            replay_dump_line(w->dump, g, exec_node_get(g, nodes[i]));
        pthread_mutex_unlock(&w->lock);
    }
    if (w->inner.ops)
        w->inner.ops(w->inner.ctx, g, n, nodes, begins, ends);
}

/* The inner set's node_def, under the watch's ctx. */
static void w_node_def(void *ctx, const exec_graph *g, const exec_node *n, uint64_t flops, uint64_t bytes)
{
    watch *w = ctx;
    w->inner.node_def(w->inner.ctx, g, n, flops, bytes);
}

/* One pass; watched when traced or dumping. A traced pass runs the program
 * one recorded step at a time (each a run of its nodes, so that the step's
 * ops are in the trace before its step_end); step numbers go on from pass
 * to pass. */
static exec_status pass(replay_program *p, watch *w, const exec_run_opts *ro0, FILE *dump, uint64_t *wall,
                        uint32_t *step)
{
    int watched = w->traced || dump;
    /* a watched pass's runs see their ops through the watching hooks (the
     * run's own: the process's hooks, a tracer's, stay installed) */
    exec_hooks h = { .ctx = w, .node_def = w->inner.node_def ? w_node_def : NULL, .ops = w_ops };
    exec_settings set = ro0->settings ? *ro0->settings : (exec_settings){ 0 };
    exec_run_opts opts = *ro0;
    const exec_run_opts *ro = ro0;
    if (watched) {
        w->dump = dump;
        set.hooks = &h;
        opts.settings = &set;
        ro = &opts;
    }
    exec_status s = EXEC_OK;
    uint64_t t0 = base_now_ns();
    if (!w->traced) {
        s = exec_graph_run(p->g, ro);
    } else {
        uint32_t nn = exec_node_count(p->g);
        exec_run_opts seg = *ro;
        for (uint32_t a = 0; a < nn && !s;) {
            uint32_t b = a + 1;
            while (b < nn && !p->step_first[b])
                b++;
            int in_step = p->step_first[a];
            seg.first_node = a;
            seg.end_node = b;
            if (in_step)
                exec_trace_step_begin(*step);
            s = exec_graph_run(p->g, &seg);
            if (in_step)
                exec_trace_step_end((*step)++, NAN);
            a = b;
        }
    }
    *wall += base_now_ns() - t0;
    w->dump = NULL;
    if (dump)
        fflush(dump);
    return s;
}

/* The report's row of op's type: a new row the first time, and past
 * REPLAY_MAX_TYPES - 1 types the last row, which takes the rest.  *cls:
 * the op's class, or -1 where it has none. */
static replay_row *type_row(replay_report *r, const replay_program *p, const replay_op *op, int *cls)
{
    const char *name, *cls_name;
    const void *key;
    *cls = -1;
    if (op->unknown >= 0) {
        key = p->unknown[op->unknown].name, name = p->unknown[op->unknown].name, cls_name = "?";
    } else if (op->fw) {
        key = op->fw, name = op->fw->name, cls_name = op->fw->cls;
        for (int i = 0; i < EXEC_CLASS_COUNT; i++)
            if (strcmp(cls_name, exec_class_name((exec_class)i)) == 0)
                *cls = i;
    } else {
        key = &exec_op_table[op->op], name = exec_op_name(op->op);
        cls_name = exec_class_name(exec_op_table[op->op].cls);
        *cls = exec_op_table[op->op].cls;
    }
    int t = 0;
    while (t < r->ntypes && r->types[t].key != key)
        t++;
    if (t < r->ntypes)
        return &r->types[t];
    if (r->ntypes >= REPLAY_MAX_TYPES - 1) { /* the last row takes the rest */
        t = REPLAY_MAX_TYPES - 1;
        if (r->ntypes == REPLAY_MAX_TYPES - 1) {
            snprintf(r->types[t].name, sizeof r->types[t].name, "(more op types)");
            r->types[t].cls = "?";
            r->types[t].key = r->types;
            r->ntypes++;
        }
        return &r->types[t];
    }
    replay_row *row = &r->types[r->ntypes++];
    snprintf(row->name, sizeof row->name, "%s", name);
    row->cls = cls_name;
    row->key = key;
    return row;
}

/* Each recorded op's recorded time, and its nodes' replayed time (ns, over
 * iters passes), onto the rows of its type and class.  An op not replayed
 * counts as demoted, with the reason. */
static void report_ops(replay_report *r, const replay_program *p, const uint64_t *ns, int iters)
{
    const char *why_unknown = p->imported ? "not in the op table (tracer/import_ops.def)" : "not known to this version";
    for (uint32_t k = 0; k < p->nops; k++) {
        const replay_op *op = &p->ops[k];
        int c;
        replay_row *row = type_row(r, p, op, &c);
        r->rec_ops++;
        if (op->unknown >= 0 || !op->nnodes) {
            row->demoted++;
            row->demoted_ns += (double)op->rec_ns;
            if (!row->why)
                row->why = op->unknown >= 0 ? why_unknown : op->why;
            r->demoted_rec_ns += (double)op->rec_ns;
            continue;
        }
        double rep = 0;
        for (int i = 0; i < op->nnodes; i++)
            rep += (double)ns[op->node + (uint32_t)i] / iters;
        r->rep_ops++;
        row->count++;
        row->rec_ns += (double)op->rec_ns;
        row->rep_ns += rep;
        if (op->converted) {
            row->converted++;
            r->converted_ops++;
        }
        if (c >= 0) {
            replay_row *cr = &r->classes[c];
            cr->count++;
            cr->rec_ns += (double)op->rec_ns;
            cr->rep_ns += rep;
        }
        r->rec_op_ns += (double)op->rec_ns;
        r->rep_op_ns += rep;
    }
}

/* The sums over all steps made per step; the measured device time (a
 * linked execution trace's per op, named as it) onto the row of its op
 * type; the step predicted. */
static void report_per_step(replay_report *r, const replay_program *p)
{
    double per = 1.0 / r->steps;
    for (uint32_t i = 0; i < p->ndev; i++)
        for (int t = 0; t < r->ntypes; t++)
            if (strncmp(r->types[t].name, p->dev[i].name, sizeof r->types[t].name - 1) == 0) {
                r->types[t].dev_ns += (double)p->dev[i].ns;
                r->typed_dev_ns += (double)p->dev[i].ns * per;
                break;
            }
    r->rec_dev_ns = (double)p->rec_dev_ns * per;
    for (int i = 0; i < r->ntypes; i++) {
        replay_row *w = &r->types[i];
        w->dev_ns *= per;
        w->rec_ns *= per;
        w->rep_ns *= per;
        w->demoted_ns *= per;
        w->count = (w->count + r->steps - 1) / r->steps;
        w->demoted = (w->demoted + r->steps - 1) / r->steps;
        w->converted = (w->converted + r->steps - 1) / r->steps;
        r->demoted_types += w->why != NULL;
    }
    for (int c = 0; c < EXEC_CLASS_COUNT; c++) {
        snprintf(r->classes[c].name, sizeof r->classes[c].name, "%s", exec_class_name((exec_class)c));
        r->classes[c].rec_ns *= per;
        r->classes[c].rep_ns *= per;
        r->classes[c].count = (r->classes[c].count + r->steps - 1) / r->steps;
    }
    r->rec_op_ns *= per;
    r->rep_op_ns *= per;
    r->demoted_rec_ns *= per;
    r->rec_step_ns = p->nsteps ? (double)p->rec_step_ns / p->nsteps : r->rec_op_ns + r->demoted_rec_ns;
    /* the time outside the replayed ops (the model's own work, ops not
     * replayed) is carried over */
    r->predicted_step_ns = r->rec_step_ns - r->rec_op_ns + r->rep_op_ns;
}

exec_status replay_run(replay_program *p, const replay_opts *o, replay_report *r)
{
    memset(r, 0, sizeof *r);
    uint32_t nn = exec_node_count(p->g);
    uint64_t *ns = base_calloc(nn + 1, sizeof *ns);
    if (!ns)
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
    exec_status s = EXEC_OK;
    int iters = o->iterations > 0 ? o->iterations : 3;
    int warmup = o->warmup > 0 ? o->warmup : 0;
    int dump_extra = o->dump && warmup == 0; /* the dump pass is never timed */
    const exec_hooks *cur = exec_hooks_cur();
    watch w = { .traced = cur != NULL };
    if (cur)
        w.inner = *cur;
    pthread_mutex_init(&w.lock, NULL);
    uint32_t step = 0;
    if (w.traced && !p->step_first) {
        pthread_mutex_destroy(&w.lock);
        base_free(ns);
        return exec_fail(EXEC_ERR_STATE, "replay: the program is not built");
    }
    uint32_t steps = p->nsteps ? p->nsteps : 1;
    exec_run_info info = {
        .model = p->rec.model,
        .mode = p->rec.mode,
        .preset = p->rec.preset,
        .version = FATHOM_VERSION,
        .blas = exec_blas_config(),
        .cpu = exec_cpu_model(),
        .batch = p->rec.batch,
        .steps = steps * (uint32_t)(warmup + dump_extra + iters),
        .threads = (uint32_t)(o->threads > 0 ? o->threads : exec_threads_get()),
        .inter = (uint32_t)(o->inter > 1 ? o->inter : 1),
        .seed = 0,
    };

    exec_trace_run_begin(&info);
    exec_settings set = { .threads = o->threads, .conv_algo = o->conv_algo, .bind = o->bind };
    exec_run_opts ro = { .inter = o->inter, .max_phase = EXEC_PHASE_update, .settings = &set };
    uint64_t wall = 0;
    /* every pass on the state as the build filled it, put back untimed
     * (before the first pass of all a copy onto itself) */
    for (int i = 0; i < warmup + dump_extra && !s; i++) {
        replay_program_restore(p);
        s = pass(p, &w, &ro, i == 0 ? o->dump : NULL, &wall, &step);
    }
    uint64_t before = exec_graph_ops_run(p->g);
    ro.node_ns = ns;
    wall = 0;
    for (int i = 0; i < iters && !s; i++) {
        replay_program_restore(p);
        s = pass(p, &w, &ro, NULL, &wall, &step);
    }
    exec_trace_run_end((int32_t)s);

    if (!s) {
        r->ops_executed = exec_graph_ops_run(p->g) - before;
        r->steps = steps;
        r->ops = nn;
        r->rep_wall_step_ns = (double)wall / iters / steps;
        report_ops(r, p, ns, iters);
        r->unknown_types = p->nunknown;
        report_per_step(r, p);
    }
    pthread_mutex_destroy(&w.lock);
    base_free(ns);
    return s;
}
