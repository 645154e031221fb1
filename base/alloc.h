/* alloc.h -- every engine allocation goes through here: byte accounting and
 * injectable failure (for tests), as SQLite and Redis do. */
#ifndef FATHOM_BASE_ALLOC_H
#define FATHOM_BASE_ALLOC_H
#include <stddef.h>
#include <stdint.h>

void *base_malloc(size_t n);
void *base_calloc(size_t count, size_t size);
void *base_realloc(void *p, size_t n);
/* 64-byte aligned, for arenas and kernel workspaces. */
void *base_malloc_aligned(size_t n);
void base_free(void *p);         /* for base_malloc / calloc / realloc */
void base_free_aligned(void *p); /* for base_malloc_aligned */
char *base_strdup(const char *s);

/* Makes room in the array at *(void **)pp, of *cap elements of `size`
 * bytes each, for at least `need`: nothing where it has room, else a
 * reallocation to half as large again (git's alloc_nr: (cap + 16) * 3 / 2,
 * or `need` where that is more). 0, or -1 with the array and *cap as they
 * were where memory ran out or the bytes would overflow. */
int base_grow(void *pp, size_t *cap, size_t need, size_t size);

/* Bytes currently held and the most ever held through this wrapper. */
size_t base_alloc_bytes(void);
size_t base_alloc_peak(void);
/* Injected failure: the n-th allocation from now fails (n >= 1), and every
 * later one too when `sticky`; n = 0 turns injection off. */
void base_alloc_fail_after(uint64_t n, int sticky);
#endif
