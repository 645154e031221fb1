/* import_spill.h -- the importer's arrays that grow with the events (its
 * spans, a GPU trace's launches), in memory up to a window and past it in
 * an unlinked temporary file (docs/design.md, "Imported traces").
 *
 * An array is one mapping: in anonymous memory while it is smaller than
 * the window (16 MB), then of a temporary file in $TMPDIR (or /tmp) that
 * no directory names.  Code reads and writes it as any array.  Each pass
 * over it counts the bytes it touches; past a window's worth the mapping's
 * pages are handed back to the page cache (madvise MADV_DONTNEED): they
 * stay in the file, and the process keeps at most about a window of them.
 * So the importer's memory does not grow with the file it reads.  Where no
 * temporary file can be made the array stays in anonymous memory. */
#ifndef FATHOM_ANALYZE_IMPORT_SPILL_H
#define FATHOM_ANALYZE_IMPORT_SPILL_H

#include <stddef.h>
#include <stdint.h>

typedef struct imp_spill {
    void *p;        /* the array; NULL before the first reserve */
    size_t len;     /* bytes mapped */
    int fd;         /* the temporary file, -1: anonymous memory */
    size_t touched; /* bytes touched since the pages were last handed back */
} imp_spill;

#define IMP_SPILL_INIT \
    {                  \
        NULL, 0, -1, 0 \
    }

/* Room for at least `bytes` (twice the size at each growth; the array may
 * move).  0, or -1 where neither memory nor the file could grow. */
int imp_spill_grow(imp_spill *s, size_t bytes);
static inline int imp_spill_reserve(imp_spill *s, size_t bytes)
{
    return bytes <= s->len ? 0 : imp_spill_grow(s, bytes);
}

/* Hands the file's pages back (the file keeps them). */
void imp_spill_trim(imp_spill *s);
/* Counts bytes touched; trims past the window. */
size_t imp_spill_window_bytes(void);
static inline void imp_spill_touch(imp_spill *s, size_t bytes)
{
    s->touched += bytes;
    if (s->touched >= imp_spill_window_bytes())
        imp_spill_trim(s);
}

/* Copies `bytes` at byte `off` of the array from data (the array grows
 * to hold them) or into data, through the file's read and write calls
 * where it has one: the mapping's pages are not touched.  0, or -1. */
int imp_spill_write(imp_spill *s, size_t off, const void *data, size_t bytes);
int imp_spill_read(const imp_spill *s, size_t off, void *data, size_t bytes);

/* A sequential reader or writer of an array through a buffer of its own
 * (imp_spill_read and _write): a pass over the array that maps no page. */
typedef struct imp_spill_io {
    imp_spill *s;
    char *buf;
    size_t cap, n, pos; /* the buffer: its size, bytes in it, the reader's position */
    size_t off, end;    /* the array's byte at buf[0]; a reader's end */
} imp_spill_io;

/* A reader of bytes [off, end) or a writer from off (end
 * IMP_SPILL_WRITER), with a buffer of cap bytes (buf: borrowed, or NULL for
 * one of its own).  0, or -1. */
#define IMP_SPILL_WRITER SIZE_MAX
int imp_spill_io_open(imp_spill_io *io, imp_spill *s, size_t off, size_t end, char *buf, size_t cap);
/* A writer's buffer to the array; frees an own buffer (buf NULL). */
int imp_spill_io_close(imp_spill_io *io, int own);
int imp_spill_io_flush(imp_spill_io *io);
static inline int imp_spill_put(imp_spill_io *io, const void *e, size_t size)
{
    if (io->n + size > io->cap && imp_spill_io_flush(io))
        return -1;
    for (size_t i = 0; i < size; i++) /* small elements: a loop the compiler turns into moves */
        io->buf[io->n + i] = ((const char *)e)[i];
    io->n += size;
    return 0;
}
/* The reader's next element of size bytes, or NULL at the end (or on an
 * error: *err set). */
const void *imp_spill_refill(imp_spill_io *io, size_t size, int *err);
static inline const void *imp_spill_get(imp_spill_io *io, size_t size, int *err)
{
    if (io->pos + size <= io->n) {
        const void *e = io->buf + io->pos;
        io->pos += size;
        return e;
    }
    return imp_spill_refill(io, size, err);
}

/* Frees the array (and its file), and leaves it empty. */
void imp_spill_release(imp_spill *s);

/* Sorts the first n elements of `size` bytes: in place where they fit in
 * the window, else chunks of a window sorted in place and merged into a new
 * array (equal elements keep their order where qsort keeps it).  0, or -1
 * out of memory (the array then as it was, its order unknown). */
int imp_spill_sort(imp_spill *s, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* The window in bytes (0: the default, 16 MB); tests set a small one to
 * send fixtures through the file. */
void imp_spill_window(size_t bytes);

#endif
