/* test_base.c -- base/'s small shared helpers: base_grow, the clock, the
 * hash, the hash table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/table.h"

/* Room made where there is none, the contents kept, nothing where there is. */
static void test_grow(void **state)
{
    (void)state;
    int *a = NULL;
    size_t cap = 0;
    for (size_t n = 0; n < 1000; n++) {
        assert_int_equal(base_grow(&a, &cap, n + 1, sizeof *a), 0);
        assert_true(cap >= n + 1);
        a[n] = (int)n;
    }
    for (size_t n = 0; n < 1000; n++)
        assert_int_equal(a[n], (int)n);
    int *before = a;
    size_t cap_before = cap;
    assert_int_equal(base_grow(&a, &cap, cap, sizeof *a), 0);
    assert_ptr_equal(a, before);
    assert_int_equal(cap, cap_before);
    /* half as large again, or what is needed where that is more */
    assert_int_equal(base_grow(&a, &cap, cap + 1, sizeof *a), 0);
    assert_int_equal(cap, (cap_before + 16) * 3 / 2);
    assert_int_equal(base_grow(&a, &cap, 10 * cap, sizeof *a), 0);
    assert_int_equal(cap, 10 * ((cap_before + 16) * 3 / 2));
    base_free(a);
}

/* A failed allocation or an overflowing size leaves the array as it was. */
static void test_grow_fails(void **state)
{
    (void)state;
    char *a = NULL;
    size_t cap = 0;
    assert_int_equal(base_grow(&a, &cap, 10, 1), 0);
    memcpy(a, "123456789", 10);
    char *before = a;
    size_t cap_before = cap;
    base_alloc_fail_after(1, 0);
    assert_int_equal(base_grow(&a, &cap, cap + 1, 1), -1);
    base_alloc_fail_after(0, 0);
    assert_ptr_equal(a, before);
    assert_int_equal(cap, cap_before);
    assert_string_equal(a, "123456789");
    assert_int_equal(base_grow(&a, &cap, SIZE_MAX / 2, 4), -1);
    assert_ptr_equal(a, before);
    assert_int_equal(cap, cap_before);
    base_free(a);
}

/* FNV-1a's published values, and pieces hashed as one. */
static void test_hash(void **state)
{
    (void)state;
    assert_true(base_fnv1a("", 0) == 0xcbf29ce484222325ull);
    assert_true(base_fnv1a("a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(base_fnv1a("foobar", 6) == 0x85944171f73967e8ull);
    assert_true(base_fnv1a_more(base_fnv1a("foo", 3), "bar", 3) == base_fnv1a("foobar", 6));
}

/* An entry keyed by a u64, as most users of the table have. */
typedef struct num {
    uint64_t key;
    uint64_t val;
} num;

/* Against a plain array under random puts and dels: every key found where
 * it should be, with its value, through many grows and backward shifts. */
static void test_table(void **state)
{
    (void)state;
    enum { NKEY = 3000 };
    static uint64_t ref[NKEY]; /* 0: absent, else value + 1 */
    memset(ref, 0, sizeof ref);
    base_table t = BASE_TABLE(num, sizeof(uint64_t));
    assert_null(base_table_get(&t, &(uint64_t){ 1 }));
    uint64_t rng = 12345;
    size_t live = 0;
    for (int step = 0; step < 200000; step++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t k = (rng >> 33) % NKEY; /* 0 is a key like any other */
        num *e = base_table_get(&t, &k);
        assert_true(!e == !ref[k]);
        if (e)
            assert_true(e->key == k && e->val + 1 == ref[k]);
        if ((rng >> 20 & 3) != 0 || step < 5000) {
            base_table_status st = base_table_put(&t, &k, (void **)&e);
            assert_int_equal(st, ref[k] ? BASE_TABLE_FOUND : BASE_TABLE_ADDED);
            if (st == BASE_TABLE_ADDED) {
                assert_true(e->key == k && e->val == 0);
                live++;
            }
            e->val = step;
            ref[k] = (uint64_t)step + 1;
        } else if (e) {
            base_table_del(&t, e);
            ref[k] = 0;
            live--;
        }
        assert_int_equal(t.len, live);
    }
    assert_true(t.cap >= 2 * t.len);
    size_t pos = 0, seen = 0;
    for (num *e; (e = base_table_next(&t, &pos));) {
        assert_true(ref[e->key] == e->val + 1);
        seen++;
    }
    assert_int_equal(seen, live);
    base_table copy;
    assert_int_equal(base_table_copy(&copy, &t), BASE_TABLE_OK);
    for (uint64_t k = 0; k < NKEY; k++) {
        num *e = base_table_get(&copy, &k);
        assert_true(!e == !ref[k]);
    }
    base_table_free(&copy);
    base_table_free(&t);
    assert_null(base_table_get(&t, &(uint64_t){ 1 }));
}

/* Keys that share a slot (all one hash), and byte keys the caller keeps. */
typedef struct word {
    base_table_bytes key;
    int id;
} word;

static void test_table_bytes(void **state)
{
    (void)state;
    base_table t = BASE_TABLE(word, 0);
    static const char *w[] = { "the", "cat", "", "sat", "on", "the", "mat", "cat" };
    int ids[8], next = 0;
    for (int i = 0; i < 8; i++) {
        base_table_bytes k = { w[i], strlen(w[i]) };
        word *e;
        base_table_status st = base_table_put(&t, &k, (void **)&e);
        assert_true(st != BASE_TABLE_NOMEM);
        if (st == BASE_TABLE_ADDED)
            e->id = next++;
        ids[i] = e->id;
    }
    assert_int_equal(next, 6);
    assert_int_equal(ids[5], ids[0]);
    assert_int_equal(ids[7], ids[1]);
    /* a prefix is another key */
    assert_null(base_table_get(&t, &(base_table_bytes){ "ca", 2 }));
    word *e = base_table_get(&t, &(base_table_bytes){ "catalogue", 3 });
    assert_non_null(e);
    assert_int_equal(e->id, ids[1]);
    base_table_free(&t);

    /* a table of 16 slots that all hold keys of one home slot: collisions
     * and a removal in the middle of the run */
    base_table c = BASE_TABLE(num, sizeof(uint64_t));
    assert_int_equal(base_table_reserve(&c, 8), BASE_TABLE_OK);
    size_t cap = c.cap, n = 0;
    uint64_t same[6];
    const uint64_t home = base_table_hash(&c, &(uint64_t){ 0 }) & (cap - 1);
    for (uint64_t k = 0; n < 6; k++)
        if ((base_table_hash(&c, &k) & (cap - 1)) == home)
            same[n++] = k;
    for (size_t i = 0; i < 6; i++) {
        num *x;
        assert_int_equal(base_table_put(&c, &same[i], (void **)&x), BASE_TABLE_ADDED);
        x->val = i;
    }
    assert_int_equal(c.cap, cap); /* reserved: no grow */
    base_table_del(&c, base_table_get(&c, &same[2]));
    for (size_t i = 0; i < 6; i++) {
        num *x = base_table_get(&c, &same[i]);
        if (i == 2) {
            assert_null(x);
        } else {
            assert_non_null(x);
            assert_int_equal(x->val, i);
        }
    }
    base_table_free(&c);
}

/* A failed allocation leaves the table as it was and says why. */
static void test_table_nomem(void **state)
{
    (void)state;
    base_table t = BASE_TABLE(num, sizeof(uint64_t));
    num *e;
    base_alloc_fail_after(1, 0);
    assert_int_equal(base_table_put(&t, &(uint64_t){ 7 }, (void **)&e), BASE_TABLE_NOMEM);
    assert_non_null(strstr(base_errmsg(), "out of memory"));
    assert_int_equal(t.len, 0);
    uint64_t k = 0;
    for (; t.len < 8; k++)
        assert_int_equal(base_table_put(&t, &k, (void **)&e), BASE_TABLE_ADDED);
    size_t cap = t.cap;
    base_alloc_fail_after(1, 1);
    for (; t.len < cap / 2; k++)
        assert_int_equal(base_table_put(&t, &k, (void **)&e), BASE_TABLE_ADDED);
    assert_int_equal(base_table_put(&t, &k, (void **)&e), BASE_TABLE_NOMEM); /* the grow */
    base_alloc_fail_after(0, 0);
    assert_int_equal(t.cap, cap);
    assert_int_equal(t.len, cap / 2);
    for (uint64_t i = 0; i < k; i++)
        assert_non_null(base_table_get(&t, &i));
    assert_null(base_table_get(&t, &k));
    base_table copy;
    base_alloc_fail_after(1, 0);
    assert_int_equal(base_table_copy(&copy, &t), BASE_TABLE_NOMEM);
    assert_int_equal(copy.len, 0);
    assert_null(base_table_get(&copy, &(uint64_t){ 0 }));
    base_table_free(&copy);
    base_table_free(&t);
}

/* The clock moves forward, in ns, and base_now_s says the same. */
static void test_clock(void **state)
{
    (void)state;
    uint64_t a = base_now_ns();
    struct timespec nap = { 0, 2000000 };
    nanosleep(&nap, NULL);
    uint64_t b = base_now_ns();
    assert_true(b - a >= 2000000);
    double s = base_now_s();
    assert_true(s * 1e9 >= (double)b && s * 1e9 < (double)b + 1e9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow),        cmocka_unit_test(test_grow_fails), cmocka_unit_test(test_hash),
        cmocka_unit_test(test_clock),       cmocka_unit_test(test_table),      cmocka_unit_test(test_table_bytes),
        cmocka_unit_test(test_table_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
