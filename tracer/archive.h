/*
 * fathom archive library: the run MANIFEST (manifest.c), writing a trace
 * archive (.tar.zst, pax restricted format; archive_write.c) and opening any
 * trace source (archive, CTF directory, lttng-live URL) safely
 * (archive_open.c).
 *
 * Depends on libarchive and base/'s allocator (base/alloc.h, whose
 * failures a test injects) alone; nothing else of exec/.
 *
 * Errors (base/error.h): every function that can fail returns a
 * tracer_archive_status (TRACER_ARCHIVE_OK == 0) and leaves a one-line
 * message in the thread's base_errmsg(). No function calls exit().
 */
#ifndef FATHOM_TRACER_ARCHIVE_H
#define FATHOM_TRACER_ARCHIVE_H

#include "base/error.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tracer_archive_status {
    TRACER_ARCHIVE_OK = 0,
    TRACER_ARCHIVE_EINVAL,   /* bad argument (NULL, invalid key, bad value) */
    TRACER_ARCHIVE_ENOMEM,   /* allocation failed */
    TRACER_ARCHIVE_EIO,      /* a system call failed (open, write, mkdir, ...) */
    TRACER_ARCHIVE_EEXIST,   /* output (or manifest key) already exists */
    TRACER_ARCHIVE_EFORMAT,  /* not an archive, corrupt, truncated, bad MANIFEST */
    TRACER_ARCHIVE_EUNSAFE,  /* hostile entry: .., absolute, link, device, ... */
    TRACER_ARCHIVE_ELIMIT,   /* size / entry-count bound exceeded */
    TRACER_ARCHIVE_ENOTRACE, /* no CTF trace (no `metadata` file) found */
    TRACER_ARCHIVE_ENOSPC    /* no space left on device (to extract, write) */
} tracer_archive_status;

/* Short constant description of a status ("truncated", ...). */
const char *tracer_archive_strstatus(tracer_archive_status st);

/* ------------------------------------------------------------------------
 * MANIFEST: an ordered list of key=value lines.
 *
 * Keys: 1..128 bytes of [A-Za-z0-9._:-] (e.g. `events.fathom:op_begin`).
 * Values: any string up to TRACER_MANIFEST_VALUE_MAX bytes; when serialized,
 * `\`, newline, CR, tab and other control bytes are escaped (`\\`, `\n`,
 * `\r`, `\t`, `\xHH`) so every entry stays on one line.  Parsing reverses
 * this, skips blank lines and lines starting with `#`, and rejects
 * malformed lines, unknown escapes and duplicate keys.
 *
 * Keys written by `fathom record` (docs/design.md, "Archives"): schema, model, mode,
 * preset, host, cpu, blas, threads, created, and `events.<name>=<count>`.
 * ---------------------------------------------------------------------- */
#define TRACER_MANIFEST_KEY_MAX 128
#define TRACER_MANIFEST_VALUE_MAX 4096
#define TRACER_MANIFEST_FILE "MANIFEST"
#define TRACER_MANIFEST_SCHEMA 3 /* the trace schema fathom writes */

typedef struct tracer_manifest tracer_manifest;

tracer_manifest *tracer_manifest_create(void);
void tracer_manifest_destroy(tracer_manifest *m);

/* Append key=value; TRACER_ARCHIVE_EEXIST if the key is already present. */
tracer_archive_status tracer_manifest_add(tracer_manifest *m, const char *key, const char *value);
/* Replace the value of key in place, or append it. */
tracer_archive_status tracer_manifest_set(tracer_manifest *m, const char *key, const char *value);
/* Set key to a decimal unsigned integer. */
tracer_archive_status tracer_manifest_set_u64(tracer_manifest *m, const char *key, uint64_t value);

/* Borrowed value of key, or NULL. */
const char *tracer_manifest_get(const tracer_manifest *m, const char *key);
/* Parse key's value as a decimal u64: OK, EINVAL (absent) or EFORMAT. */
tracer_archive_status tracer_manifest_get_u64(const tracer_manifest *m, const char *key, uint64_t *out);

/*
 * The typed keys of a MANIFEST, range-checked:
 *   schema    u32 in [1, TRACER_SCHEMA_MAX]   (required)
 *   model     non-empty                       (required)
 *   mode      train | infer                   (required)
 *   preset, host, cpu, blas, version: at most 512 bytes
 *   steps     [1, 100000000]   batch [1, 1000000]   threads [1, 4096]
 *   inter     [1, 64]          seed  any u64
 *   created   YYYY-mm-ddTHH:MM:SSZ (a valid UTC date and time)
 *   events, events.*, discarded, ops, op_time_ns: u64
 * Numbers are plain decimal: no sign, no spaces, no exponent, no overflow.
 * Unknown keys are not checked.  Writes one line per problem ("key
 * 'steps': '1e23' is not an integer in [1, 100000000]"), each ended by a
 * newline, into out (truncated to outlen; may be NULL) and returns how many
 * problems there are.  A NULL manifest has one problem ("no MANIFEST").
 */
#define TRACER_SCHEMA_MAX 3
size_t tracer_manifest_check(const tracer_manifest *m, char *out, size_t outlen);

/*
 * The MANIFEST's schema against the schema the trace itself says
 * (run_begin.schema, as a trace reader decodes it).  Returns 0 when they
 * agree (or the MANIFEST has no valid schema: tracer_manifest_check says
 * so), 1 when they disagree, with a one-line message in msg.
 */
int tracer_manifest_check_schema(const tracer_manifest *m, uint32_t trace_schema, char *msg, size_t msglen);

size_t tracer_manifest_count(const tracer_manifest *m);
/* Borrowed key / value of entry i (insertion order), NULL if out of range. */
const char *tracer_manifest_key_at(const tracer_manifest *m, size_t i);
const char *tracer_manifest_value_at(const tracer_manifest *m, size_t i);

/* Serialize to a NUL-terminated text from base_malloc (the caller frees *out
 * with base_free). */
tracer_archive_status tracer_manifest_serialize(const tracer_manifest *m, char **out, size_t *out_len);
/* Parse `len` bytes of text into a new manifest (destroy it when done).
 * `name` (may be NULL) prefixes error messages: "NAME:LINE: ...". */
tracer_archive_status tracer_manifest_parse(const char *text, size_t len, const char *name, tracer_manifest **out);
/* Read and parse a MANIFEST file (at most 1 MiB). */
tracer_archive_status tracer_manifest_read_file(const char *path, tracer_manifest **out);

/* ------------------------------------------------------------------------
 * Writing archives.
 * ---------------------------------------------------------------------- */
#define TRACER_ARCHIVE_TOPDIR "trace" /* CTF tree lives under trace/ */
#define TRACER_ARCHIVE_DEFAULT_DIR "traces"
#define TRACER_ARCHIVE_SUFFIX ".tar.zst"

/*
 * Write `out_path` as a zstd-compressed pax (restricted) tar holding
 * `MANIFEST` (from m) and the tree under `ctf_dir` as `trace/...`.
 * Only regular files and directories are archived; a symlink or special
 * file inside ctf_dir is an error.  Never overwrites: the archive is written
 * to `<out_path>.tmpXXXXXX` in the same directory, then linked to out_path
 * with no-clobber semantics; if out_path exists -> TRACER_ARCHIVE_EEXIST.
 * On any error nothing is left behind.
 */
tracer_archive_status tracer_archive_write(const char *out_path, const char *ctf_dir, const tracer_manifest *m);

/*
 * Default archive name:
 *   <model>-<mode>-<preset>-<host>-<YYYYmmddTHHMMSSZ>.tar.zst
 * (<model>-rank<N>-<mode>-... for one rank of a distributed job: a
 * manifest with source.rank) from the manifest's model, mode, preset and
 * host (missing -> "unknown";
 * characters outside [A-Za-z0-9._+] become '_') and `when` in UTC
 * (`(time_t)-1` = now).  Writes the file name only into buf.
 */
tracer_archive_status tracer_archive_default_name(const tracer_manifest *m, time_t when, char *buf, size_t buflen);

/*
 * First path `<dir>/<default name>` that does not exist yet, trying
 * `<stem>.tar.zst`, `<stem>-1.tar.zst`, `<stem>-2.tar.zst`, ...
 * dir NULL -> "traces".  (Advisory: tracer_archive_write_default is the
 * race-free way to pick and write.)
 */
tracer_archive_status tracer_archive_default_path(const char *dir, const tracer_manifest *m, time_t when, char *buf,
                                                  size_t buflen);

/*
 * Write the archive into `dir` (NULL -> "traces", created if missing)
 * under its default name, adding the first free uniqueness suffix
 * (-1, -2, ...) so that recording twice never overwrites.  The chosen path
 * is copied into out_path (may be NULL; if it is too small the archive is
 * still written and TRACER_ARCHIVE_EINVAL says so).  `when` as in
 * tracer_archive_default_name.
 */
/* What tracer_archive_write_default checks of `dir` before creating any
 * folder: a path short enough for an archive name below it, and no name
 * component over 255 bytes.  EINVAL with the reason in base_errmsg(). */
tracer_archive_status tracer_archive_check_dir(const char *dir);

tracer_archive_status tracer_archive_write_default(const char *dir, const char *ctf_dir, const tracer_manifest *m,
                                                   time_t when, char *out_path, size_t out_len);

/* ------------------------------------------------------------------------
 * Opening a trace source (untrusted input).
 * ---------------------------------------------------------------------- */
typedef enum tracer_trace_kind {
    TRACER_TRACE_ARCHIVE, /* extracted into a private temporary directory */
    TRACER_TRACE_DIR,     /* a CTF directory used in place */
    TRACER_TRACE_LIVE     /* a net:// (lttng-live) URL, passed through */
} tracer_trace_kind;

typedef struct tracer_trace_limits {
    /* sum of extracted file sizes; 0 = default ($FATHOM_MAX_EXTRACT, else 4 GiB) */
    uint64_t max_total_bytes;
    uint64_t max_entries; /* archive entries; 0 = default */
} tracer_trace_limits;

#define TRACER_TRACE_DEFAULT_MAX_BYTES (UINT64_C(4) << 30) /* 4 GiB */
/* Environment variable overriding the default extraction bound: bytes, in
 * decimal, optionally followed by K, M or G (powers of 1024). */
#define TRACER_TRACE_MAX_ENV "FATHOM_MAX_EXTRACT"
#define TRACER_TRACE_DEFAULT_MAX_ENTRIES UINT64_C(100000)
#define TRACER_TRACE_PATH_MAX 1024 /* longest accepted entry name */

typedef struct tracer_trace tracer_trace;

/*
 * Open `path_or_url`:
 *  - `net://...`: stored as is, kind LIVE, no CTF paths, no manifest;
 *  - a directory: every directory below it (itself included) that holds a
 *    regular file `metadata` is a CTF trace path; the manifest is read from
 *    `<dir>/MANIFEST`, or `<dir>/../MANIFEST` when dir is named `trace`;
 *  - anything else is read as an archive, detected by content (tar, pax,
 *    ustar, gnu tar; raw, gzip, zstd, xz, bzip2 ... compression) and
 *    extracted into a private `fathom-trace-<pid>-XXXXXX` directory under
 *    $TMPDIR (or /tmp).  Only regular files and directories are accepted;
 *    `..`, absolute names, links, devices, fifos, sockets, empty or
 *    overlong names, duplicate files, and exceeding the limits are errors.
 *    The sizes the tar headers declare are summed (a first pass that
 *    writes nothing) and checked against the bound and against the free
 *    space of $TMPDIR before anything is extracted (ELIMIT, or ENOSPC with
 *    "no space left on device"); the bound is enforced again while
 *    writing.  The directory is removed by tracer_trace_close, on error,
 *    and by the cleanup handler of output.h when SIGINT, SIGTERM or SIGHUP
 *    ends the process; the trees of dead (SIGKILLed) processes are removed
 *    by the next archive open.
 * limits may be NULL (defaults).  On error *out is NULL, a one-line message
 * is in base_errmsg(), and no temporary file or directory is left behind.
 */
tracer_archive_status tracer_trace_open(const char *path_or_url, tracer_trace **out);
tracer_archive_status tracer_trace_open_ex(const char *path_or_url, const tracer_trace_limits *limits,
                                           tracer_trace **out);

/* Remove the temporary directory (if any) and free t.  NULL is a no-op. */
void tracer_trace_close(tracer_trace *t);

/* Accessors take a trace from tracer_trace_open (NULL-safe). */
tracer_trace_kind tracer_trace_get_kind(const tracer_trace *t);
/* The path or URL given to open (borrowed). */
const char *tracer_trace_source(const tracer_trace *t);
/* Extraction dir (ARCHIVE), the directory (DIR), or the URL (LIVE). */
const char *tracer_trace_root(const tracer_trace *t);
/* CTF trace directories, sorted (borrowed, valid until close). */
size_t tracer_trace_ctf_count(const tracer_trace *t);
const char *tracer_trace_ctf_path(const tracer_trace *t, size_t i);
/* The MANIFEST, or NULL if the source had none (borrowed). */
const tracer_manifest *tracer_trace_manifest(const tracer_trace *t);
/* Sets CTF trace i aside (a reader found it is not one it reads): it leaves
 * the CTF paths and becomes a skipped one, "PATH (why)" with PATH named
 * inside the source.  EINVAL (no such trace) or ENOMEM. */
tracer_archive_status tracer_trace_skip_ctf(tracer_trace *t, size_t i, const char *why);
size_t tracer_trace_skipped_count(const tracer_trace *t);
const char *tracer_trace_skipped(const tracer_trace *t, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* FATHOM_TRACER_ARCHIVE_H */
