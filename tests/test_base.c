/* test_base.c -- base/'s small shared helpers: base_grow, the clock, the hash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/hash.h"

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
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_grow_fails),
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
