/* replay_fixtures.c -- small fathom-schema CTF traces for the replay tests,
 * written with the tests' CTF writer (tests/fixtures/ctfgen), each a whole
 * op program (tensor_alloc, ops with data flow, steps) with one thing
 * wrong (or nothing, for "ok"):
 *   replay_fixtures DIR KIND
 * KIND: ok | newop | attrs | stride0 | dangling | nosteps | shapes | zerodim | huge | badio
 * Exit 0 when written. */
#include "fixtures/ctfgen.h"

#include <stdio.h>
#include <string.h>

enum { VT = 100 };

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: replay_fixtures DIR KIND\n");
        return 2;
    }
    const char *kind = argv[2];
    static const char *const kinds[] = { "ok",      "newop",  "attrs",   "stride0", "dangling",
                                         "nosteps", "shapes", "zerodim", "huge",    "badio" };
    int known = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        known |= !strcmp(kind, kinds[i]);
    if (!known) {
        fprintf(stderr, "replay_fixtures: unknown kind %s\n", kind);
        return 2;
    }
    static const char *const ops[] = { "MatMul", "Relu", "Conv2D", "FancyNewOp" };
    enum { MATMUL, RELU, CONV, FANCY };
    ctfgen_options o = { .ops = ops, .nops = 4, .nstreams = 1 };
    ctfgen *g = ctfgen_create(argv[1], &o);
    if (!g) {
        fprintf(stderr, "replay_fixtures: cannot create %s\n", argv[1]);
        return 1;
    }
    int ok = 0;
    uint64_t t = 1000, seq = 0;
#define TRY(x)        \
    do {              \
        if ((x) != 0) \
            goto end; \
    } while (0)
    TRY(ctfgen_run_begin(g, t++, VT, 1, "fixture", CTFGEN_TRAIN, "tiny", 3, 2, 1, 1, 7));
    /* tensors: x [3,4], w [4,5], h [3,5], y [3,5], z [3,5]; conv: in, filter, out */
    const uint32_t x[] = { 3, 4 }, w[] = { 4, 5 }, h[] = { 3, 5 }, bad[] = { 3, 6 }, zero[] = { 3, 0 },
                   huge[] = { 65536, 65536, 65536 }, ci[] = { 1, 1, 4, 4 }, cf[] = { 1, 1, 2, 2 },
                   co[] = { 1, 1, 3, 3 };
    TRY(ctfgen_tensor_alloc(g, t++, VT, 1, CTFGEN_INPUT, 2, x, 48));
    TRY(ctfgen_tensor_alloc(g, t++, VT, 2, CTFGEN_WEIGHT, 2, w, 80));
    if (!strcmp(kind, "shapes"))
        TRY(ctfgen_tensor_alloc(g, t++, VT, 3, CTFGEN_ACTIVATION, 2, bad, 72));
    else if (!strcmp(kind, "zerodim"))
        TRY(ctfgen_tensor_alloc(g, t++, VT, 3, CTFGEN_ACTIVATION, 2, zero, 0));
    else
        TRY(ctfgen_tensor_alloc(g, t++, VT, 3, CTFGEN_ACTIVATION, 2, h, 60));
    TRY(ctfgen_tensor_alloc(g, t++, VT, 4, CTFGEN_ACTIVATION, 2, h, 60));
    TRY(ctfgen_tensor_alloc(g, t++, VT, 5, CTFGEN_ACTIVATION, 2, h, 60));
    TRY(ctfgen_tensor_alloc(g, t++, VT, 6, CTFGEN_INPUT, 4, ci, 64));
    TRY(ctfgen_tensor_alloc(g, t++, VT, 7, CTFGEN_WEIGHT, 4, cf, 16));
    TRY(ctfgen_tensor_alloc(g, t++, VT, 8, CTFGEN_ACTIVATION, 4, co, 36));
    if (!strcmp(kind, "huge")) {
        TRY(ctfgen_tensor_alloc(g, t++, VT, 9, CTFGEN_ACTIVATION, 3, huge, 0));
        TRY(ctfgen_tensor_alloc(g, t++, VT, 10, CTFGEN_ACTIVATION, 3, huge, 0));
    }
    int steps = !strcmp(kind, "nosteps") ? 0 : 2;
    for (int s = 0; s < (steps ? steps : 2); s++) {
        if (steps)
            TRY(ctfgen_step_begin(g, t++, VT, (uint32_t)s));
        const uint32_t mm_in[] = { 1, 2 }, mm_out[] = { 3 }, r_in[] = { 3 }, r_out[] = { 4 }, r2_in[] = { 4 },
                       r2_out[] = { 5 }, c_in[] = { 6, 7 }, c_out[] = { 8 }, dangling[] = { 77 }, huge_in[] = { 9 },
                       huge_out[] = { 10 };
        const int64_t mm_attrs[] = { 0, 0, 0, 0, 0 }, conv_attrs[] = { 1, 1, 0, 0 }, conv0[] = { 0, 0, 0, 0 };
        int mm_nattrs = !strcmp(kind, "attrs") ? 5 : 2;
        TRY(ctfgen_op_begin(g, t, VT, seq, MATMUL, CTFGEN_MATRIX, CTFGEN_FORWARD, 0, 2, mm_in, 1, mm_out,
                            (size_t)mm_nattrs, mm_attrs));
        TRY(ctfgen_op_end(g, t += 500, VT, seq++, 120, 208));
        /* Relu(h) -> y, or an op of a newer version in its place */
        int mid = !strcmp(kind, "newop") ? FANCY : RELU;
        TRY(ctfgen_op_begin(g, ++t, VT, seq, mid, CTFGEN_ELEMENTWISE, CTFGEN_FORWARD, 1, 1,
                            !strcmp(kind, "dangling") ? dangling
                            : !strcmp(kind, "huge")   ? huge_in
                                                      : r_in,
                            !strcmp(kind, "badio") ? 0 : 1, !strcmp(kind, "huge") ? huge_out : r_out, 0, NULL));
        TRY(ctfgen_op_end(g, t += 300, VT, seq++, 15, 120));
        TRY(ctfgen_op_begin(g, ++t, VT, seq, RELU, CTFGEN_ELEMENTWISE, CTFGEN_FORWARD, 2, 1, r2_in, 1, r2_out, 0,
                            NULL));
        TRY(ctfgen_op_end(g, t += 200, VT, seq++, 15, 120));
        TRY(ctfgen_op_begin(g, ++t, VT, seq, CONV, CTFGEN_CONVOLUTION, CTFGEN_FORWARD, 3, 2, c_in, 1, c_out, 4,
                            !strcmp(kind, "stride0") ? conv0 : conv_attrs));
        TRY(ctfgen_op_end(g, t += 400, VT, seq++, 72, 116));
        if (steps)
            TRY(ctfgen_step_end(g, t += 100, VT, (uint32_t)s, 0.5));
        t += 100;
    }
    TRY(ctfgen_run_end(g, t++, VT, 0, seq));
    ok = 1;
end:
    if (!ok)
        fprintf(stderr, "replay_fixtures: %s\n", ctfgen_error(g));
    if (ctfgen_close(g) != 0) {
        fprintf(stderr, "replay_fixtures: cannot write the trace in %s\n", argv[1]);
        ok = 0;
    }
    return ok ? 0 : 1;
}
