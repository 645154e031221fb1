/* alloc.c -- the engine's allocation wrapper. */
#include "alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Each block carries its size in a 64-byte header, so frees are accounted
 * exactly and the payload stays 64-byte aligned for the aligned variant. */
#define HDR 64

static atomic_size_t g_bytes;
static atomic_size_t g_peak;
static atomic_uint_fast64_t g_fail_countdown; /* 0: off */
static atomic_int g_fail_sticky;

static int should_fail(void)
{
    uint_fast64_t c = atomic_load(&g_fail_countdown);
    while (c != 0) {
        if (c == 1) {
            if (atomic_load(&g_fail_sticky))
                return 1;
            if (atomic_compare_exchange_weak(&g_fail_countdown, &c, 0))
                return 1;
        } else if (atomic_compare_exchange_weak(&g_fail_countdown, &c, c - 1)) {
            return 0;
        }
    }
    return 0;
}

static void account(size_t add, size_t sub)
{
    size_t now = atomic_fetch_add(&g_bytes, add) + add;
    atomic_fetch_sub(&g_bytes, sub);
    now -= sub;
    size_t peak = atomic_load(&g_peak);
    while (now > peak && !atomic_compare_exchange_weak(&g_peak, &peak, now)) {
    }
}

/* Large blocks (the arenas, kernel scratch) ask for transparent huge pages
 * on their 2 MiB-aligned interior: where the kernel grants them only on
 * request (transparent_hugepage=madvise, Debian's default), a step's
 * tensors otherwise take one TLB entry per 4 KiB. */
#define HUGE_PAGE ((uintptr_t)2 << 20)
static void advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    if (n < 2 * HUGE_PAGE)
        return;
    uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), e = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* advice: a refusal changes nothing */
#else
    (void)p, (void)n;
#endif
}

void *base_malloc_aligned(size_t n)
{
    if (should_fail() || n > SIZE_MAX - HDR)
        return NULL;
    unsigned char *p = aligned_alloc(HDR, ((n + HDR - 1) / HDR) * HDR + HDR);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof n);
    account(n, 0);
    advise_huge(p, n + HDR);
    return p + HDR;
}

void *base_malloc(size_t n) { return base_malloc_aligned(n); }

void *base_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    void *p = base_malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void base_free_aligned(void *p)
{
    if (!p)
        return;
    unsigned char *b = (unsigned char *)p - HDR;
    size_t n;
    memcpy(&n, b, sizeof n);
    account(0, n);
    free(b);
}

void base_free(void *p) { base_free_aligned(p); }

void *base_realloc(void *p, size_t n)
{
    if (!p)
        return base_malloc(n);
    size_t old;
    memcpy(&old, (unsigned char *)p - HDR, sizeof old);
    void *q = base_malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    base_free(p);
    return q;
}

char *base_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = base_malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

int base_grow(void *pp, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap < (SIZE_MAX - 16) / 3 * 2 ? (*cap + 16) * 3 / 2 : SIZE_MAX;
    if (c < need)
        c = need;
    if (size && c > SIZE_MAX / size)
        return -1;
    void *q = base_realloc(*(void **)pp, c * size);
    if (!q)
        return -1;
    *(void **)pp = q;
    *cap = c;
    return 0;
}

size_t base_alloc_bytes(void) { return atomic_load(&g_bytes); }
size_t base_alloc_peak(void) { return atomic_load(&g_peak); }

void base_alloc_fail_after(uint64_t n, int sticky)
{
    atomic_store(&g_fail_sticky, sticky);
    atomic_store(&g_fail_countdown, n);
}
