/* import_spill.c -- the importer's arrays that grow with the events, past a
 * window in an unlinked temporary file (import_spill.h). */
#define _GNU_SOURCE /* O_TMPFILE, mremap */
#include "analyze/import_spill.h"
#include "base/alloc.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DEFAULT_WINDOW (UINT64_C(16) << 20)

static size_t window = DEFAULT_WINDOW;

void imp_spill_window(size_t bytes) { window = bytes ? bytes : DEFAULT_WINDOW; }
size_t imp_spill_window_bytes(void) { return window; }

/* A temporary file no directory names, or -1. */
static int temp_file(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/fathom-import-XXXXXX", dir) >= (int)sizeof path)
        return -1;
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

int imp_spill_grow(imp_spill *s, size_t bytes)
{
    size_t len = s->len ? s->len : 4096;
    while (len < bytes) {
        if (len > SIZE_MAX / 2)
            return -1;
        len *= 2;
    }
    void *q;
    if (s->fd < 0 && len > window) { /* past the window: into a file */
        int fd = temp_file();
        if (fd >= 0) {
            q = ftruncate(fd, (off_t)len) == 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                                               : MAP_FAILED;
            if (q == MAP_FAILED) {
                close(fd);
                return -1;
            }
            if (s->p) {
                if (pwrite(fd, s->p, s->len, 0) != (ssize_t)s->len) {
                    munmap(q, len), close(fd);
                    return -1;
                }
                munmap(s->p, s->len);
            }
            s->p = q, s->len = len, s->fd = fd;
            s->touched = 0;
            return 0;
        }
    }
    if (s->fd >= 0) {
        if (ftruncate(s->fd, (off_t)len))
            return -1;
        q = mremap(s->p, s->len, len, MREMAP_MAYMOVE);
    } else if (s->p) {
        q = mremap(s->p, s->len, len, MREMAP_MAYMOVE);
    } else {
        q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    if (q == MAP_FAILED)
        return -1;
    s->p = q, s->len = len;
    return 0;
}

int imp_spill_write(imp_spill *s, size_t off, const void *data, size_t bytes)
{
    if (imp_spill_reserve(s, off + bytes))
        return -1;
    if (s->fd < 0) {
        memcpy((char *)s->p + off, data, bytes);
        return 0;
    }
    for (size_t done = 0; done < bytes;) {
        ssize_t k = pwrite(s->fd, (const char *)data + done, bytes - done, (off_t)(off + done));
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return 0;
}

int imp_spill_read(const imp_spill *s, size_t off, void *data, size_t bytes)
{
    if (off + bytes > s->len)
        return -1;
    if (s->fd < 0) {
        memcpy(data, (const char *)s->p + off, bytes);
        return 0;
    }
    for (size_t done = 0; done < bytes;) {
        ssize_t k = pread(s->fd, (char *)data + done, bytes - done, (off_t)(off + done));
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return 0;
}

int imp_spill_io_open(imp_spill_io *io, imp_spill *s, size_t off, size_t end, char *buf, size_t cap)
{
    *io = (imp_spill_io){ .s = s, .buf = buf, .cap = cap, .off = off, .end = end };
    if (!buf && !(io->buf = base_malloc(cap)))
        return -1;
    return 0;
}

int imp_spill_io_flush(imp_spill_io *io)
{
    if (io->n && imp_spill_write(io->s, io->off, io->buf, io->n))
        return -1;
    io->off += io->n;
    io->n = 0;
    return 0;
}

int imp_spill_io_close(imp_spill_io *io, int own)
{
    int rc = io->s && io->end == IMP_SPILL_WRITER ? imp_spill_io_flush(io) : 0;
    if (own)
        base_free(io->buf);
    io->buf = NULL;
    io->s = NULL;
    return rc;
}

const void *imp_spill_refill(imp_spill_io *io, size_t size, int *err)
{
    size_t left = io->n - io->pos; /* bytes not consumed yet */
    memmove(io->buf, io->buf + io->pos, left);
    io->off += io->pos; /* the array's byte now at buf[0] */
    size_t want = io->end - io->off < io->cap ? io->end - io->off : io->cap;
    io->pos = 0;
    io->n = left;
    if (want > left && imp_spill_read(io->s, io->off + left, io->buf + left, want - left)) {
        *err = 1;
        return NULL;
    }
    io->n = want > left ? want : left;
    if (size > io->n)
        return NULL;
    io->pos = size;
    return io->buf;
}

void imp_spill_trim(imp_spill *s)
{
    s->touched = 0;
    if (s->fd >= 0) /* anonymous pages would lose their contents */
        madvise(s->p, s->len, MADV_DONTNEED);
}

void imp_spill_release(imp_spill *s)
{
    if (s->p)
        munmap(s->p, s->len);
    if (s->fd >= 0)
        close(s->fd);
    *s = (imp_spill)IMP_SPILL_INIT;
}

/* The heap of the merge: run indices by their next element (ties: the
 * earlier run first, so equal elements keep their order). */
typedef struct merge {
    const char *base;
    size_t size;
    size_t *at, *end; /* per run: the next element, the end */
    int (*cmp)(const void *, const void *);
} merge;

static int run_less(const merge *m, size_t a, size_t b)
{
    int c = m->cmp(m->base + m->at[a] * m->size, m->base + m->at[b] * m->size);
    return c < 0 || (c == 0 && a < b);
}

static void sift_down(const merge *m, size_t *heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, min = i;
        if (l < n && run_less(m, heap[l], heap[min]))
            min = l;
        if (r < n && run_less(m, heap[r], heap[min]))
            min = r;
        if (min == i)
            return;
        size_t x = heap[i];
        heap[i] = heap[min], heap[min] = x;
        i = min;
    }
}

int imp_spill_sort(imp_spill *s, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    size_t chunk = window / size > 2 ? window / size : 2;
    if (n < 2)
        return 0;
    if (n <= chunk) {
        qsort(s->p, n, size, cmp);
        imp_spill_touch(s, n * size);
        return 0;
    }
    size_t runs = (n + chunk - 1) / chunk;
    for (size_t r = 0; r < runs; r++) {
        size_t k = r == runs - 1 ? n - r * chunk : chunk;
        qsort((char *)s->p + r * chunk * size, k, size, cmp);
        imp_spill_touch(s, k * size);
    }
    imp_spill out = IMP_SPILL_INIT;
    merge m = { .base = s->p, .size = size, .cmp = cmp };
    m.at = base_malloc(runs * sizeof *m.at);
    m.end = base_malloc(runs * sizeof *m.end);
    size_t *heap = base_malloc(runs * sizeof *heap);
    int rc = -1;
    if (!m.at || !m.end || !heap || imp_spill_reserve(&out, n * size))
        goto end;
    for (size_t r = 0; r < runs; r++) {
        m.at[r] = r * chunk;
        m.end[r] = r == runs - 1 ? n : (r + 1) * chunk;
        heap[r] = r;
    }
    for (size_t i = runs / 2; i-- > 0;)
        sift_down(&m, heap, runs, i);
    size_t live = runs;
    for (size_t i = 0; i < n; i++) {
        size_t r = heap[0];
        memcpy((char *)out.p + i * size, m.base + m.at[r] * size, size);
        imp_spill_touch(&out, size);
        imp_spill_touch(s, size);
        if (++m.at[r] == m.end[r])
            heap[0] = heap[--live];
        sift_down(&m, heap, live, 0);
    }
    imp_spill_release(s);
    *s = out;
    out = (imp_spill)IMP_SPILL_INIT;
    rc = 0;
end:
    imp_spill_release(&out);
    base_free(m.at), base_free(m.end), base_free(heap);
    return rc;
}
