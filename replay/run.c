/* run.c -- re-executes a rebuilt program, timing every node, and sets the
 * replayed times beside the recorded ones per op type and class. */
#include "replay/run.h"

#include "exec/alloc.h"

#include <stdio.h>
#include <string.h>

exec_status replay_run(replay_program *p, const replay_opts *o, replay_report *r)
{
    memset(r, 0, sizeof *r);
    uint32_t nn = exec_node_count(p->g);
    uint64_t *ns = exec_calloc(nn + 1, sizeof *ns);
    if (!ns)
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
    exec_status s = EXEC_OK;
    int iters = o->iterations > 0 ? o->iterations : 3;
    exec_run_opts ro = { .inter = o->inter, .max_phase = EXEC_PHASE_update };
    for (int w = 0; w < o->warmup && !s; w++)
        s = exec_graph_run(p->g, &ro);
    uint64_t before = exec_graph_ops_run(p->g);
    ro.node_ns = ns;
    for (int i = 0; i < iters && !s; i++)
        s = exec_graph_run(p->g, &ro);
    if (s)
        goto end;
    r->ops_executed = exec_graph_ops_run(p->g) - before;
    r->steps = p->nsteps ? p->nsteps : 1;
    r->ops = p->nops;
    double per = 1.0 / r->steps;
    int index[EXEC_OP_COUNT];
    for (int t = 0; t < EXEC_OP_COUNT; t++)
        index[t] = -1;
    for (uint32_t k = 0; k < p->nops; k++) {
        const replay_op *op = &p->ops[k];
        int t = op->op;
        if (index[t] < 0) {
            index[t] = r->ntypes++;
            replay_row *row = &r->types[index[t]];
            snprintf(row->name, sizeof row->name, "%s", exec_op_name(op->op));
            row->cls = exec_class_name(exec_op_table[t].cls);
        }
        replay_row *row = &r->types[index[t]], *c = &r->classes[exec_op_table[t].cls];
        double rep = (double)ns[op->node] / iters;
        row->count++;
        row->rec_ns += (double)op->rec_ns;
        row->rep_ns += rep;
        c->count++;
        c->rec_ns += (double)op->rec_ns;
        c->rep_ns += rep;
        r->rec_op_ns += (double)op->rec_ns;
        r->rep_op_ns += rep;
    }
    for (int i = 0; i < r->ntypes; i++) {
        r->types[i].rec_ns *= per;
        r->types[i].rep_ns *= per;
        r->types[i].count = (r->types[i].count + r->steps - 1) / r->steps;
    }
    for (int c = 0; c < EXEC_CLASS_COUNT; c++) {
        snprintf(r->classes[c].name, sizeof r->classes[c].name, "%s", exec_class_name((exec_class)c));
        r->classes[c].rec_ns *= per;
        r->classes[c].rep_ns *= per;
        r->classes[c].count = (r->classes[c].count + r->steps - 1) / r->steps;
    }
    r->rec_op_ns *= per;
    r->rep_op_ns *= per;
    r->rec_step_ns = p->nsteps ? (double)p->rec_step_ns / p->nsteps : r->rec_op_ns;
    r->predicted_step_ns = r->rec_step_ns - r->rec_op_ns + r->rep_op_ns;
end:
    exec_free(ns);
    return s;
}
