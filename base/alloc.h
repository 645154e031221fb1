/* alloc.h -- every engine allocation goes through here: byte accounting and
 * injectable failure (for tests), as SQLite and Redis do. */
#ifndef FATHOM_EXEC_ALLOC_H
#define FATHOM_EXEC_ALLOC_H
#include <stddef.h>
#include <stdint.h>

void *exec_malloc(size_t n);
void *exec_calloc(size_t count, size_t size);
void *exec_realloc(void *p, size_t n);
/* 64-byte aligned, for arenas and kernel workspaces. */
void *exec_malloc_aligned(size_t n);
void exec_free(void *p);         /* for exec_malloc / calloc / realloc */
void exec_free_aligned(void *p); /* for exec_malloc_aligned */
char *exec_strdup(const char *s);

/* Bytes currently held and the most ever held through this wrapper. */
size_t exec_alloc_bytes(void);
size_t exec_alloc_peak(void);
/* Injected failure: the n-th allocation from now fails (n >= 1), and every
 * later one too when `sticky`; n = 0 turns injection off. */
void exec_alloc_fail_after(uint64_t n, int sticky);
#endif
