/* metadata.c -- what a CTF trace is, from its metadata alone (see
 * metadata.h). */
#include "tracer/metadata.h"

#include "base/alloc.h"
#include "base/error.h"
#include "tracer/decode.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest metadata scanned (a kernel trace's is a few MB); a bigger
 * one is left to the decoder. */
#define META_MAX (64u << 20)
/* A metadata packet's header (CTF 1.8 section 7.1): magic, uuid, checksum,
 * content_size and packet_size (bits), five one-byte fields. */
#define META_MAGIC 0x75D11D57u
#define META_HEADER 37

/* The event names of the schemas this fathom reads. */
static const char *const known_events[] = {
    TRACER_EV_RUN_BEGIN, TRACER_EV_RUN_END,  TRACER_EV_STEP_BEGIN, TRACER_EV_STEP_END,     TRACER_EV_NODE_DEF,
    TRACER_EV_OPS,       TRACER_EV_OP_BEGIN, TRACER_EV_OP_END,     TRACER_EV_TENSOR_ALLOC, TRACER_EV_TENSOR_FREE,
};

/* The file `dir/metadata` (at most META_MAX bytes) into *out; its length, or
 * -1. */
static long read_metadata(const char *dir, char **out)
{
    char path[4096];
    struct stat st;
    *out = NULL;
    if (snprintf(path, sizeof path, "%s/metadata", dir) >= (int)sizeof path)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)META_MAX) {
        close(fd);
        return -1;
    }
    char *b = base_malloc((size_t)st.st_size + 1);
    long n = 0;
    while (b && n < (long)st.st_size) {
        ssize_t r = read(fd, b + n, (size_t)st.st_size - (size_t)n);
        if (r <= 0)
            break;
        n += r;
    }
    close(fd);
    if (!b)
        return -1;
    b[n] = '\0';
    *out = b;
    return n;
}

static uint32_t u32_in(const unsigned char *p, int be)
{
    return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
              : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* Packetized metadata made its text, in place: the new length, or -1 where
 * a packet's header does not hold together. */
static long unpacketize(char *b, long n)
{
    const unsigned char *u = (const unsigned char *)b;
    const int be = u32_in(u, 1) == META_MAGIC;
    long off = 0, out = 0;
    while (off < n) {
        if (n - off < META_HEADER || u32_in(u + off, be) != META_MAGIC)
            return -1;
        const uint32_t content = u32_in(u + off + 24, be) / 8, packet = u32_in(u + off + 28, be) / 8;
        if (content < META_HEADER || packet < content || u[off + 32] || u[off + 33] || u[off + 34])
            return -1; /* compressed, encrypted or checksummed: not for a scan */
        if ((long)content > n - off)
            return -1; /* cut short: what is missing may be the fathom event classes */
        memmove(b + out, b + off + META_HEADER, content - META_HEADER);
        out += (long)content - META_HEADER;
        off += packet;
    }
    b[out] = '\0';
    return out;
}

/* ---- a TSDL scan: tokens, braces, and the few top-level blocks it wants ---- */
typedef struct scan {
    const char *p, *end;
    int bad;
} scan;

enum tok { T_END, T_IDENT, T_STRING, T_NUMBER, T_PUNCT };

/* The next token into buf (strings without their quotes, truncated to len). */
static enum tok next(scan *s, char *buf, size_t len)
{
    buf[0] = '\0';
    for (;;) {
        while (s->p < s->end && isspace((unsigned char)*s->p))
            s->p++;
        if (s->end - s->p >= 2 && s->p[0] == '/' && s->p[1] == '*') {
            const char *e = strstr(s->p + 2, "*/");
            if (!e || e >= s->end)
                return s->bad = 1, T_END;
            s->p = e + 2;
        } else if (s->end - s->p >= 2 && s->p[0] == '/' && s->p[1] == '/') {
            while (s->p < s->end && *s->p != '\n')
                s->p++;
        } else {
            break;
        }
    }
    if (s->p >= s->end)
        return T_END;
    const char c = *s->p;
    size_t k = 0;
    if (c == '"' || c == '\'') {
        for (s->p++; s->p < s->end && *s->p != c; s->p++) {
            if (*s->p == '\\' && s->p + 1 < s->end)
                s->p++;
            if (k + 1 < len)
                buf[k++] = *s->p;
        }
        if (s->p >= s->end)
            return s->bad = 1, T_END;
        s->p++;
        buf[k] = '\0';
        return T_STRING;
    }
    if (isalpha((unsigned char)c) || c == '_') {
        while (s->p < s->end && (isalnum((unsigned char)*s->p) || *s->p == '_'))
            if (k + 1 < len)
                buf[k++] = *s->p++;
            else
                s->p++;
        buf[k] = '\0';
        return T_IDENT;
    }
    if (isdigit((unsigned char)c) || c == '-' || c == '+') {
        buf[k++] = *s->p++;
        while (s->p < s->end && (isalnum((unsigned char)*s->p) || *s->p == '.'))
            if (k + 1 < len)
                buf[k++] = *s->p++;
            else
                s->p++;
        buf[k] = '\0';
        return T_NUMBER;
    }
    if (!isprint((unsigned char)c))
        return s->bad = 1, T_END; /* a NUL or binary byte: not TSDL */
    buf[0] = *s->p++;
    buf[1] = '\0';
    return T_PUNCT;
}

/* In a block at depth 1: `key = value ;` with the value's tokens joined
 * (an unquoted name such as fathom:run_begin is several tokens). */
static void take_value(scan *s, char *val, size_t len)
{
    char tok[256];
    size_t k = 0;
    val[0] = '\0';
    for (enum tok t; (t = next(s, tok, sizeof tok)) != T_END;) {
        if (t == T_PUNCT && (tok[0] == ';' || tok[0] == '{' || tok[0] == '}')) {
            if (tok[0] != ';')
                s->bad = 1; /* not a key's value: give the scan up */
            return;
        }
        size_t n = strlen(tok);
        if (k + n + 1 < len) {
            memcpy(val + k, tok, n + 1);
            k += n;
        }
    }
}

/* src into dst[n], cut to fit: names past a field's size are cut, not refused */
static void copy_cut(char *dst, size_t n, const char *src)
{
    size_t len = strnlen(src, n - 1);
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static void note_event(tracer_ctf_meta *m, const char *name)
{
    m->events++;
    if (strncmp(name, "fathom:", 7) != 0)
        return;
    m->fathom_events++;
    for (size_t i = 0; i < sizeof known_events / sizeof *known_events; i++)
        if (!strcmp(name, known_events[i])) {
            m->kind = TRACER_CTF_FATHOM;
            return;
        }
    if (!m->unknown_fathom[0])
        copy_cut(m->unknown_fathom, sizeof m->unknown_fathom, name);
}

static void note_env(tracer_ctf_meta *m, const char *key, const char *val)
{
    if (!strcmp(key, "tracer_name"))
        copy_cut(m->tracer, sizeof m->tracer, val);
    else if (!strcmp(key, "domain"))
        copy_cut(m->domain, sizeof m->domain, val);
    else if (!strcmp(key, "tracer_major"))
        m->tracer_major = strtol(val, NULL, 0);
    else if (!strcmp(key, "tracer_minor"))
        m->tracer_minor = strtol(val, NULL, 0);
}

/* Scans TSDL text: 0, or -1 where its braces or tokens do not hold together. */
static int scan_tsdl(const char *text, long n, tracer_ctf_meta *m)
{
    scan s = { text, text + n, 0 };
    char tok[256], prev[256] = "", val[256];
    int depth = 0, have_trace = 0;
    enum { B_OTHER, B_EVENT, B_ENV } block = B_OTHER;
    for (enum tok t; (t = next(&s, tok, sizeof tok)) != T_END;) {
        if (t == T_PUNCT && tok[0] == '{') {
            if (depth == 0) {
                block = !strcmp(prev, "event") ? B_EVENT : !strcmp(prev, "env") ? B_ENV : B_OTHER;
                have_trace |= !strcmp(prev, "trace");
                m->stream_classes += !strcmp(prev, "stream");
            }
            depth++;
        } else if (t == T_PUNCT && tok[0] == '}') {
            if (--depth < 0)
                return -1;
        } else if (depth == 1 && t == T_PUNCT && tok[0] == '=' && block != B_OTHER && prev[0]) {
            char key[sizeof prev];
            memcpy(key, prev, sizeof key);
            take_value(&s, val, sizeof val);
            if (block == B_EVENT && !strcmp(key, "name"))
                note_event(m, val);
            else if (block == B_ENV)
                note_env(m, key, val);
            prev[0] = '\0';
            continue;
        }
        snprintf(prev, sizeof prev, "%s", t == T_IDENT ? tok : "");
    }
    return s.bad || depth != 0 || !have_trace ? -1 : 0;
}

/* Regular files beside the metadata: the streams. */
static unsigned count_streams(const char *dir)
{
    unsigned n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    struct stat st;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && strcmp(e->d_name, "metadata") != 0 &&
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            n++;
    if (d)
        closedir(d);
    return n;
}

int tracer_ctf_meta_scan(const char *dir, tracer_ctf_meta *m)
{
    *m = (tracer_ctf_meta){ .kind = TRACER_CTF_UNKNOWN, .tracer_major = -1, .tracer_minor = -1 };
    char *b;
    long n = read_metadata(dir, &b);
    if (n < 0)
        return -1;
    m->streams = count_streams(dir);
    const unsigned char *u = (const unsigned char *)b;
    int rc = 0;
    if (n >= 4 && (u32_in(u, 0) == META_MAGIC || u32_in(u, 1) == META_MAGIC)) {
        m->packetized = 1;
        n = unpacketize(b, n);
    }
    long i = 0;
    while (n > 0 && i < n && isspace(u[i]))
        i++;
    if (n < 0) {
        rc = -1;
    } else if (i < n && u[i] == 0x1e) { /* CTF 2: JSON text sequences */
        m->ctf2 = 1;
        m->kind = strstr(b, "\"fathom:") ? TRACER_CTF_UNKNOWN : TRACER_CTF_FOREIGN;
    } else if (scan_tsdl(b, n, m) != 0) {
        m->kind = TRACER_CTF_UNKNOWN;
        rc = -1;
    } else if (m->kind != TRACER_CTF_FATHOM) {
        m->kind = m->fathom_events ? TRACER_CTF_NEWSCHEMA : TRACER_CTF_FOREIGN;
    }
    base_free(b);
    return rc;
}

void tracer_ctf_meta_describe(const tracer_ctf_meta *m, char *buf, size_t len)
{
    char who[320] = "", ver[48] = "";
    if (m->tracer_major >= 0 && m->tracer_minor >= 0)
        snprintf(ver, sizeof ver, " %ld.%ld", m->tracer_major, m->tracer_minor);
    else if (m->tracer_major >= 0)
        snprintf(ver, sizeof ver, " %ld.x", m->tracer_major);
    char tb[64], db[32]; /* the trace's words: no control byte reaches a terminal */
    const char *tracer = base_printable(m->tracer, tb, sizeof tb), *domain = base_printable(m->domain, db, sizeof db);
    if (m->ctf2)
        snprintf(who, sizeof who, "a CTF 2 trace, which fathom's reader (Babeltrace2 2.0, CTF 1.8) cannot read");
    else if (!strncmp(tracer, "lttng-modules", 13) || (!tracer[0] && !strcmp(domain, "kernel")))
        snprintf(who, sizeof who, "an LTTng kernel trace (%s%s, ", tracer[0] ? tracer : "kernel", ver);
    else if (!strncmp(tracer, "lttng-ust", 9))
        snprintf(who, sizeof who, "an LTTng userspace trace (%s%s, ", tracer, ver);
    else if (tracer[0])
        snprintf(who, sizeof who, "a %s trace (%s%s, %s%s", tracer, tracer, ver, domain, domain[0] ? " domain, " : "");
    else
        snprintf(who, sizeof who, "a CTF trace (");
    if (m->ctf2)
        snprintf(buf, len, "%s", who);
    else
        snprintf(buf, len, "%s%u event class%s, %u stream%s)", who, m->events, m->events == 1 ? "" : "es", m->streams,
                 m->streams == 1 ? "" : "s");
}

static const char what_we_read[] =
    "fathom reads traces that `fathom record` writes, and PyTorch traces through `fathom import`";

tracer_status tracer_ctf_screen(tracer_trace *t, const char *source)
{
    if (tracer_trace_get_kind(t) == TRACER_TRACE_LIVE)
        return TRACER_OK;
    char first[512] = "", list[1024] = "";
    size_t skipped = 0, listed = 0;
    int newschema = 0;
    for (size_t i = 0; i < tracer_trace_ctf_count(t);) {
        tracer_ctf_meta m;
        tracer_ctf_meta_scan(tracer_trace_ctf_path(t, i), &m);
        if (m.kind != TRACER_CTF_FOREIGN && m.kind != TRACER_CTF_NEWSCHEMA) {
            i++;
            continue;
        }
        char desc[256], why[400];
        tracer_ctf_meta_describe(&m, desc, sizeof desc);
        if (m.kind == TRACER_CTF_NEWSCHEMA) {
            char name[64];
            snprintf(why, sizeof why,
                     "fathom events of a schema this fathom does not read (%s; it reads versions " TRACER_SCHEMA_READS
                     ")",
                     base_printable(m.unknown_fathom, name, sizeof name));
            newschema = 1;
        } else {
            snprintf(why, sizeof why, "not a fathom trace: %s", desc);
        }
        snprintf(first, sizeof first, "%s", why);
        if (listed < 3) {
            const char *root = tracer_trace_root(t), *rel = tracer_trace_ctf_path(t, i);
            if (!strncmp(rel, root, strlen(root))) /* named inside the source */
                for (rel += strlen(root); *rel == '/'; rel++)
                    ;
            char rb[256]; /* a folder's name: no control byte breaks the line */
            size_t k = strlen(list);
            snprintf(list + k, sizeof list - k, "%s%s in %s", listed ? ", " : "", desc,
                     *rel ? base_printable(rel, rb, sizeof rb) : ".");
            listed++;
        }
        if (tracer_trace_skip_ctf(t, i, why) != TRACER_ARCHIVE_OK)
            return (tracer_status)base_fail(TRACER_ERR_NOMEM, "%s: out of memory", source);
        skipped++;
    }
    if (tracer_trace_ctf_count(t) > 0 || !skipped)
        return TRACER_OK;
    if (skipped == 1)
        return newschema ? (tracer_status)base_fail(TRACER_ERR_INPUT, "%s: %s", source, first)
                         : (tracer_status)base_fail(TRACER_ERR_INPUT, "%s: %s; %s", source, first, what_we_read);
    return (tracer_status)base_fail(TRACER_ERR_INPUT,
                                    "%s: not a fathom trace: %zu CTF traces, none of them fathom's: %s%s; %s", source,
                                    skipped, list, skipped > listed ? ", ..." : "", what_we_read);
}
