/* table.c -- the hash table (table.h). */
#include "base/table.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/hash.h"

#include <string.h>

#define MIN_CAP 16

void base_table_init(base_table *t, size_t entry_size, size_t key_size)
{
    *t = (base_table){ .size = entry_size, .stride = 8 + (entry_size + 7) / 8 * 8, .key_size = key_size };
}

static uint64_t *slot_hash(const base_table *t, size_t i) { return (uint64_t *)(t->slots + i * t->stride); }
static void *slot_entry(const base_table *t, size_t i) { return t->slots + i * t->stride + 8; }

/* Never 0, which marks an empty slot. A byte string is hashed with
 * FNV-1a; a key of fixed size as FNV-1a would be with words of 8 bytes for
 * bytes (each xored in, then a multiply): a key of two ids costs two
 * multiplies, not sixteen. The result is stirred once with base_mix64. */
uint64_t base_table_hash(const base_table *t, const void *key)
{
    uint64_t h;
    if (t->key_size) {
        const unsigned char *p = key;
        size_t n = t->key_size;
        h = BASE_FNV1A_INIT ^ n;
        for (; n >= 8; n -= 8, p += 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        }
        if (n) {
            uint64_t w = 0;
            memcpy(&w, p, n);
            h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        }
    } else {
        const base_table_bytes *b = key;
        h = base_fnv1a(b->p, b->n);
    }
    h = base_mix64(h);
    return h ? h : 1;
}

static int key_same(const base_table *t, const void *entry, const void *key)
{
    if (t->key_size % 8 == 0) {
        const unsigned char *a = entry, *b = key;
        for (size_t i = 0; i < t->key_size; i += 8) {
            uint64_t x, y;
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y)
                return 0;
        }
        return 1;
    }
    if (t->key_size)
        return memcmp(entry, key, t->key_size) == 0;
    const base_table_bytes *a = entry, *b = key;
    return a->n == b->n && (b->n == 0 || memcmp(a->p, b->p, b->n) == 0);
}

/* The home slot of hash h. */
static size_t home(const base_table *t, uint64_t h) { return (size_t)h & (t->cap - 1); }

/* The slot of key: its own, or the empty one where it would go. */
static size_t find(const base_table *t, const void *key, uint64_t h)
{
    size_t i = home(t, h);
    for (;; i = (i + 1) & (t->cap - 1)) {
        uint64_t s = *slot_hash(t, i);
        if (s == 0 || (s == h && key_same(t, slot_entry(t, i), key)))
            return i;
    }
}

/* Moves every entry into cap slots. */
static base_table_status rehash(base_table *t, size_t cap)
{
    if (cap > SIZE_MAX / t->stride)
        return base_fail(BASE_TABLE_NOMEM, "out of memory (a table of %zu slots)", cap);
    base_table n = *t;
    n.cap = cap;
    n.slots = base_calloc(cap, t->stride);
    if (!n.slots)
        return base_fail(BASE_TABLE_NOMEM, "out of memory (a table of %zu slots)", cap);
    for (size_t i = 0; i < t->cap; i++) {
        uint64_t h = *slot_hash(t, i);
        if (!h)
            continue;
        size_t j = home(&n, h);
        while (*slot_hash(&n, j))
            j = (j + 1) & (cap - 1);
        memcpy(n.slots + j * n.stride, t->slots + i * t->stride, t->stride);
    }
    base_free(t->slots);
    *t = n;
    return BASE_TABLE_OK;
}

base_table_status base_table_reserve(base_table *t, size_t n)
{
    if (n > SIZE_MAX / 4)
        return base_fail(BASE_TABLE_NOMEM, "out of memory (a table of %zu entries)", n);
    size_t cap = t->cap ? t->cap : MIN_CAP;
    while (cap < 2 * n)
        cap *= 2;
    return cap == t->cap ? BASE_TABLE_OK : rehash(t, cap);
}

void *base_table_get(const base_table *t, const void *key)
{
    if (!t->len)
        return NULL;
    size_t i = find(t, key, base_table_hash(t, key));
    return *slot_hash(t, i) ? slot_entry(t, i) : NULL;
}

base_table_status base_table_put(base_table *t, const void *key, void **entry)
{
    uint64_t h = base_table_hash(t, key);
    if (t->len) {
        size_t i = find(t, key, h);
        if (*slot_hash(t, i)) {
            *entry = slot_entry(t, i);
            return BASE_TABLE_FOUND;
        }
    }
    if (base_table_reserve(t, t->len + 1))
        return BASE_TABLE_NOMEM;
    size_t i = find(t, key, h);
    *slot_hash(t, i) = h;
    unsigned char *e = slot_entry(t, i);
    memset(e, 0, t->stride - 8);
    memcpy(e, key, t->key_size ? t->key_size : sizeof(base_table_bytes));
    t->len++;
    *entry = e;
    return BASE_TABLE_ADDED;
}

/* Whether the entry at slot j, whose home is k, moves into the hole at i:
 * unless k lies cyclically in (i, j]. */
static int shifts(size_t i, size_t j, size_t k) { return (j > i && (k <= i || k > j)) || (j < i && k <= i && k > j); }

void base_table_del(base_table *t, void *entry)
{
    size_t mask = t->cap - 1, i = (size_t)((unsigned char *)entry - 8 - t->slots) / t->stride, j = i;
    *slot_hash(t, i) = 0;
    for (;;) {
        j = (j + 1) & mask;
        uint64_t h = *slot_hash(t, j);
        if (!h)
            break;
        if (shifts(i, j, home(t, h))) {
            memcpy(t->slots + i * t->stride, t->slots + j * t->stride, t->stride);
            *slot_hash(t, j) = 0;
            i = j;
        }
    }
    t->len--;
}

void *base_table_next(const base_table *t, size_t *pos)
{
    for (; *pos < t->cap; ++*pos)
        if (*slot_hash(t, *pos))
            return slot_entry(t, (*pos)++);
    return NULL;
}

base_table_status base_table_copy(base_table *dst, const base_table *src)
{
    *dst = *src;
    if (!src->cap)
        return BASE_TABLE_OK;
    dst->slots = base_malloc(src->cap * src->stride);
    if (!dst->slots) {
        dst->cap = dst->len = 0;
        return base_fail(BASE_TABLE_NOMEM, "out of memory (a table of %zu slots)", src->cap);
    }
    memcpy(dst->slots, src->slots, src->cap * src->stride);
    return BASE_TABLE_OK;
}

void base_table_free(base_table *t)
{
    base_free(t->slots);
    t->slots = NULL;
    t->cap = t->len = 0;
}
