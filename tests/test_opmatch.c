/* test_opmatch.c -- the pending-op map shared by every trace reader
 * (tracer/opmatch.c): against a brute-force reference under random
 * begins and ends, replacement of a begin that never ended, and the bound. */
#include "tracer/opmatch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_begin_end(void **st)
{
    (void)st;
    tracer_opmatch m = { 0 };
    tracer_opmatch_entry e = { .vtid = 7, .seq = 1, .ts = 100, .a = 3, .b = 4 }, out;
    assert_int_equal(tracer_opmatch_end(&m, 7, 1, &out), 0); /* empty: nothing */
    assert_int_equal(tracer_opmatch_begin(&m, &e, NULL), TRACER_OPMATCH_ADDED);
    assert_int_equal(tracer_opmatch_end(&m, 8, 1, &out), 0); /* another thread's seq 1 */
    assert_int_equal(tracer_opmatch_end(&m, 7, 2, &out), 0);
    assert_int_equal(tracer_opmatch_end(&m, 7, 1, &out), 1);
    assert_int_equal(out.ts, 100);
    assert_int_equal(out.a, 3);
    assert_int_equal(out.b, 4);
    assert_int_equal(tracer_opmatch_pending(&m), 0);
    assert_int_equal(tracer_opmatch_end(&m, 7, 1, &out), 0); /* ended once only */
    tracer_opmatch_clear(&m);
}

static void test_replace(void **st)
{
    (void)st;
    tracer_opmatch m = { 0 };
    tracer_opmatch_entry e = { .vtid = 1, .seq = 9, .ts = 10 }, old, out;
    assert_int_equal(tracer_opmatch_begin(&m, &e, NULL), TRACER_OPMATCH_ADDED);
    e.ts = 20;
    assert_int_equal(tracer_opmatch_begin(&m, &e, &old), TRACER_OPMATCH_REPLACED);
    assert_int_equal(old.ts, 10);
    assert_int_equal(tracer_opmatch_pending(&m), 1);
    assert_int_equal(tracer_opmatch_end(&m, 1, 9, &out), 1);
    assert_int_equal(out.ts, 20);
    tracer_opmatch_clear(&m);
}

/* Random begins and ends, checked against a brute-force list of the live
 * keys after every operation.  Keys come from a large space while at most
 * `target` stay live, so that every slot of the table is some key's home:
 * probe runs wrap around the table's end and deletions happen in the
 * middle of runs. */
static void against_reference(size_t target, int ops)
{
    uint64_t *key = calloc(target * 2 + 2, sizeof *key), *ts = calloc(target * 2 + 2, sizeof *ts);
    assert_non_null(key);
    assert_non_null(ts);
    size_t live = 0;
    tracer_opmatch m = { 0 };
    for (int i = 0; i < ops; i++) {
        uint64_t r = rnd();
        if (live < target / 2 || (live < target * 2 && r % 2)) { /* begin: a new key, or (1 in 8) a live one again */
            size_t j = live && r % 8 == 1 ? (size_t)(rnd() % live) : live;
            uint64_t k = j < live ? key[j] : rnd() % 1000000;
            for (size_t q = 0; q < live && j == live; q++)
                if (key[q] == k)
                    j = q;
            tracer_opmatch_entry e = { .vtid = k % 5, .seq = k / 5, .ts = (uint64_t)i, .a = k }, old;
            tracer_opmatch_status st = tracer_opmatch_begin(&m, &e, &old);
            if (j < live) {
                assert_int_equal(st, TRACER_OPMATCH_REPLACED);
                assert_int_equal(old.ts, ts[j]);
            } else {
                assert_int_equal(st, TRACER_OPMATCH_ADDED);
                key[live++] = k;
            }
            ts[j] = (uint64_t)i;
        } else { /* end: a live key, or (1 in 8) one that is not pending */
            tracer_opmatch_entry out;
            if (r % 8 == 2) {
                uint64_t k = 1000000 + rnd() % 1000;
                assert_int_equal(tracer_opmatch_end(&m, k % 5, k / 5, &out), 0);
            } else {
                size_t j = (size_t)(rnd() % live);
                assert_int_equal(tracer_opmatch_end(&m, key[j] % 5, key[j] / 5, &out), 1);
                assert_int_equal(out.ts, ts[j]);
                assert_int_equal(out.a, key[j]);
                key[j] = key[--live];
                ts[j] = ts[live];
                assert_int_equal(tracer_opmatch_end(&m, out.vtid, out.seq, NULL), 0);
            }
        }
        assert_int_equal(tracer_opmatch_pending(&m), live);
    }
    for (size_t j = 0; j < live; j++) /* everything left is findable */
        assert_int_equal(tracer_opmatch_end(&m, key[j] % 5, key[j] / 5, NULL), 1);
    assert_int_equal(tracer_opmatch_pending(&m), 0);
    tracer_opmatch_clear(&m);
    free(key);
    free(ts);
}

static void test_against_reference(void **st)
{
    (void)st;
    against_reference(20, 300000);   /* 64-slot tables */
    against_reference(3000, 300000); /* grown tables */
}

/* Ops that never end fill the map to its bound, no further. */
static void test_bound(void **st)
{
    (void)st;
    tracer_opmatch m = { 0 };
    tracer_opmatch_entry e = { .vtid = 1 };
    for (size_t i = 0; i < TRACER_OPMATCH_MAX; i++) {
        e.seq = i;
        assert_int_equal(tracer_opmatch_begin(&m, &e, NULL), TRACER_OPMATCH_ADDED);
    }
    e.seq = TRACER_OPMATCH_MAX;
    assert_int_equal(tracer_opmatch_begin(&m, &e, NULL), TRACER_OPMATCH_FULL);
    assert_int_equal(tracer_opmatch_pending(&m), TRACER_OPMATCH_MAX);
    e.seq = 5; /* an op already pending is still replaced when full */
    assert_int_equal(tracer_opmatch_begin(&m, &e, NULL), TRACER_OPMATCH_REPLACED);
    assert_int_equal(tracer_opmatch_end(&m, 1, 17, NULL), 1);
    e.seq = TRACER_OPMATCH_MAX;
    assert_int_equal(tracer_opmatch_begin(&m, &e, NULL), TRACER_OPMATCH_ADDED); /* room again */
    tracer_opmatch_clear(&m);
    assert_int_equal(tracer_opmatch_pending(&m), 0);
    assert_int_equal(tracer_opmatch_end(&m, 1, 5, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_begin_end),
        cmocka_unit_test(test_replace),
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
