/* parallelism_fixtures.c -- schema-2 traces with a known average
 * parallelism, for `fathom analyze parallelism` (two steps each, one
 * thread, ops timed back to back):
 *   parallelism_fixtures DIR KIND
 * KIND: chain (A -> B -> C, 10 us each: 1.0), branches (A and B each read
 * x, 10 us each: 2.0), diamond (A 10 us -> B 20 us and C 10 us -> D 10 us:
 * 50 / 40 = 1.25), noflow (ops with no inputs or outputs: an error).
 * Exit 0 when written. */
#include "fixtures/ctfgen.h"

#include <stdio.h>
#include <string.h>

enum { VT = 100 };

typedef struct fop {
    uint32_t nin, nout, in[2], out[1];
    uint64_t us;
} fop;

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: parallelism_fixtures DIR KIND\n");
        return 2;
    }
    /* x = 1; produced tensors 2.. */
    static const fop chain[] = { { 1, 1, { 1 }, { 2 }, 10 }, { 1, 1, { 2 }, { 3 }, 10 }, { 1, 1, { 3 }, { 4 }, 10 } };
    static const fop branches[] = { { 1, 1, { 1 }, { 2 }, 10 }, { 1, 1, { 1 }, { 3 }, 10 } };
    static const fop diamond[] = { { 1, 1, { 1 }, { 2 }, 10 },
                                   { 1, 1, { 2 }, { 3 }, 20 },
                                   { 1, 1, { 2 }, { 4 }, 10 },
                                   { 2, 1, { 3, 4 }, { 5 }, 10 } };
    static const fop noflow[] = { { 0, 0, { 0 }, { 0 }, 10 }, { 0, 0, { 0 }, { 0 }, 10 } };
    const fop *ops = NULL;
    size_t n = 0;
#define KIND(k)               \
    if (!strcmp(argv[2], #k)) \
        ops = k, n = sizeof k / sizeof k[0];
    KIND(chain)
    KIND(branches)
    KIND(diamond)
    KIND(noflow)
#undef KIND
    if (!ops) {
        fprintf(stderr, "parallelism_fixtures: unknown kind %s\n", argv[2]);
        return 2;
    }
    static const char *const names[] = { "MatMul", "Relu", "AddN" };
    ctfgen_options o = { .ops = names, .nops = 3, .nstreams = 1 };
    ctfgen *g = ctfgen_create(argv[1], &o);
    if (!g) {
        fprintf(stderr, "parallelism_fixtures: cannot create %s\n", argv[1]);
        return 1;
    }
    int ok = 0;
    uint64_t t = 1000;
#define TRY(x)        \
    do {              \
        if ((x) != 0) \
            goto end; \
    } while (0)
    TRY(ctfgen_run_begin(g, t++, VT, 2, "fixture", CTFGEN_TRAIN, "tiny", 1, 2, 1, 1, 7));
    const uint32_t shape[] = { 4, 4 };
    for (uint32_t id = 1; id <= 5; id++)
        TRY(ctfgen_tensor_alloc(g, t++, VT, id, id == 1 ? CTFGEN_INPUT : CTFGEN_ACTIVATION, 2, shape, 64));
    for (size_t i = 0; i < n; i++)
        TRY(ctfgen_node_def(g, t++, VT, 1, (uint32_t)i, ops[i].nin == 2 ? 2 : 1, CTFGEN_ELEMENTWISE, CTFGEN_FORWARD,
                            ops[i].nin, ops[i].in, ops[i].nout, ops[i].out, 0, NULL, 16, 128));
    for (uint32_t s = 0; s < 2; s++) {
        TRY(ctfgen_step_begin(g, t++, VT, s));
        uint32_t nodes[8];
        uint64_t begins[8], ends[8];
        for (size_t i = 0; i < n; i++) {
            nodes[i] = (uint32_t)i;
            begins[i] = t;
            ends[i] = t += ops[i].us * 1000;
            t += 100;
        }
        TRY(ctfgen_ops(g, t++, VT, 1, n, nodes, n, begins, n, ends));
        TRY(ctfgen_step_end(g, t++, VT, s, 0.5));
    }
    TRY(ctfgen_run_end(g, t++, VT, 0, 2 * n));
    ok = 1;
end:
    if (!ok)
        fprintf(stderr, "parallelism_fixtures: %s\n", ctfgen_error(g));
    if (ctfgen_close(g) != 0) {
        fprintf(stderr, "parallelism_fixtures: cannot write the trace in %s\n", argv[1]);
        ok = 0;
    }
    return ok ? 0 : 1;
}
