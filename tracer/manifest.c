/* manifest.c -- the run's MANIFEST: an ordered list of key=value lines,
 * escaped so that every entry stays on one line; checked, parsed (at most
 * MANIFEST_MAX_BYTES), serialized (archive.h describes the format). */
#define _GNU_SOURCE

#include "tracer/archive_internal.h"

#include "base/alloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MANIFEST_MAX_BYTES (1024 * 1024)

struct tracer_manifest {
    size_t n, cap;
    char **keys;
    char **vals;
};

tracer_manifest *tracer_manifest_create(void) { return base_calloc(1, sizeof(tracer_manifest)); }

void tracer_manifest_destroy(tracer_manifest *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        base_free(m->keys[i]);
        base_free(m->vals[i]);
    }
    base_free(m->keys);
    base_free(m->vals);
    base_free(m);
}

static bool key_valid(const char *key, size_t len)
{
    if (len == 0 || len > TRACER_MANIFEST_KEY_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)key[i];

        if (!isalnum(c) && c != '.' && c != '_' && c != ':' && c != '-')
            return false;
    }
    return true;
}

static long manifest_find(const tracer_manifest *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->keys[i], key) == 0)
            return (long)i;
    }
    return -1;
}

static tracer_archive_status manifest_put(tracer_manifest *m, const char *key, const char *value, bool replace)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    char *k = NULL, *v = NULL;
    long idx;

    if (!m || !key || !value) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "manifest: NULL argument");
        goto cleanup;
    }
    if (!key_valid(key, strlen(key))) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL,
                                 "manifest: invalid key '%.*s' (want 1-%d of "
                                 "[A-Za-z0-9._:-])",
                                 64, key, TRACER_MANIFEST_KEY_MAX);
        goto cleanup;
    }
    if (strlen(value) > TRACER_MANIFEST_VALUE_MAX) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "manifest: value of '%s' longer than %d bytes", key,
                                 TRACER_MANIFEST_VALUE_MAX);
        goto cleanup;
    }
    v = base_strdup(value);
    if (!v) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "manifest: out of memory");
        goto cleanup;
    }
    idx = manifest_find(m, key);
    if (idx >= 0) {
        if (!replace) {
            st = tracer_archive_fail(TRACER_ARCHIVE_EEXIST, "manifest: duplicate key '%s'", key);
            goto cleanup;
        }
        base_free(m->vals[idx]);
        m->vals[idx] = v;
        v = NULL;
        goto cleanup;
    }
    if (m->n == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 16;
        char **nk = base_realloc(m->keys, ncap * sizeof(*nk));

        if (!nk) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "manifest: out of memory");
            goto cleanup;
        }
        m->keys = nk;
        char **nv = base_realloc(m->vals, ncap * sizeof(*nv));
        if (!nv) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "manifest: out of memory");
            goto cleanup;
        }
        m->vals = nv;
        m->cap = ncap;
    }
    k = base_strdup(key);
    if (!k) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "manifest: out of memory");
        goto cleanup;
    }
    m->keys[m->n] = k;
    m->vals[m->n] = v;
    m->n++;
    k = NULL;
    v = NULL;
cleanup:
    base_free(k);
    base_free(v);
    return st;
}

tracer_archive_status tracer_manifest_add(tracer_manifest *m, const char *key, const char *value)
{
    return manifest_put(m, key, value, false);
}

tracer_archive_status tracer_manifest_set(tracer_manifest *m, const char *key, const char *value)
{
    return manifest_put(m, key, value, true);
}

tracer_archive_status tracer_manifest_set_u64(tracer_manifest *m, const char *key, uint64_t value)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%" PRIu64, value);
    return manifest_put(m, key, buf, true);
}

const char *tracer_manifest_get(const tracer_manifest *m, const char *key)
{
    long idx;

    if (!m || !key)
        return NULL;
    idx = manifest_find(m, key);
    return idx >= 0 ? m->vals[idx] : NULL;
}

tracer_archive_status tracer_manifest_get_u64(const tracer_manifest *m, const char *key, uint64_t *out)
{
    const char *v = tracer_manifest_get(m, key);
    uint64_t x = 0;

    if (!v || !out)
        return TRACER_ARCHIVE_EINVAL;
    if (*v == '\0')
        return TRACER_ARCHIVE_EFORMAT;
    for (const char *p = v; *p; p++) {
        unsigned d;

        if (*p < '0' || *p > '9')
            return TRACER_ARCHIVE_EFORMAT;
        d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return TRACER_ARCHIVE_EFORMAT;
        x = x * 10 + d;
    }
    *out = x;
    return TRACER_ARCHIVE_OK;
}

/* Appends one line to the problem list (out, *used of outlen). */
__attribute__((format(printf, 4, 5))) static void problem(char *out, size_t outlen, size_t *used, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!out || *used + 1 >= outlen)
        return;
    va_start(ap, fmt);
    n = vsnprintf(out + *used, outlen - *used, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    *used += (size_t)n < outlen - *used ? (size_t)n : outlen - *used - 1;
    if (*used + 1 < outlen) {
        out[(*used)++] = '\n';
        out[*used] = '\0';
    }
}

/* Strict decimal u64: digits only, no overflow. */
static bool parse_u64(const char *v, uint64_t *out)
{
    uint64_t x = 0;

    if (!v || !*v)
        return false;
    for (const char *p = v; *p; p++) {
        unsigned d;

        if (*p < '0' || *p > '9')
            return false;
        d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
    }
    *out = x;
    return true;
}

/* YYYY-mm-ddTHH:MM:SSZ, a real date and time. */
static bool valid_created(const char *v)
{
    static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    int y, mo, d, h, mi, sec;
    char z;
    int n = 0;

    if (strlen(v) != 20 || sscanf(v, "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &y, &mo, &d, &h, &mi, &sec, &z, &n) != 7 ||
        n != 20 || z != 'Z')
        return false;
    for (int i = 0; i < 19; i++) {
        bool sep = i == 4 || i == 7 || i == 10 || i == 13 || i == 16;

        if (!sep && !isdigit((unsigned char)v[i]))
            return false;
    }
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 60)
        return false;
    if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return false;
    return true;
}

size_t tracer_manifest_check(const tracer_manifest *m, char *out, size_t outlen)
{
    static const struct {
        const char *key;
        uint64_t lo, hi;
        bool required;
    } nums[] = {
        { "schema", 1, TRACER_SCHEMA_MAX, true },
        { "steps", 1, 100000000, false },
        { "batch", 1, 1000000, false },
        { "threads", 1, 4096, false },
        { "inter", 1, 64, false },
        { "seed", 0, UINT64_MAX, false },
        { "events", 0, UINT64_MAX, false },
        { "discarded", 0, UINT64_MAX, false },
        { "ops", 0, UINT64_MAX, false },
        { "op_time_ns", 0, UINT64_MAX, false },
    };
    static const char *const strs[] = { "preset", "host", "cpu", "blas", "version" };
    size_t used = 0, n = 0;
    const char *v;

    if (out && outlen)
        out[0] = '\0';
    if (!m) {
        problem(out, outlen, &used, "no MANIFEST");
        return 1;
    }
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        uint64_t x;

        v = tracer_manifest_get(m, nums[i].key);
        if (!v) {
            if (nums[i].required) {
                problem(out, outlen, &used, "key '%s' is missing", nums[i].key);
                n++;
            }
            continue;
        }
        if (!parse_u64(v, &x) || x < nums[i].lo || x > nums[i].hi) {
            problem(out, outlen, &used,
                    "key '%s': '%.40s' is not an integer in "
                    "[%" PRIu64 ", %" PRIu64 "]",
                    nums[i].key, v, nums[i].lo, nums[i].hi);
            n++;
        }
    }
    v = tracer_manifest_get(m, "model");
    if (!v || !*v) {
        problem(out, outlen, &used, "key 'model' is %s", v ? "empty" : "missing");
        n++;
    }
    v = tracer_manifest_get(m, "mode");
    if (!v || (strcmp(v, "train") && strcmp(v, "infer"))) {
        if (v)
            problem(out, outlen, &used, "key 'mode': '%.40s' is not train or infer", v);
        else
            problem(out, outlen, &used, "key 'mode' is missing");
        n++;
    }
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        v = tracer_manifest_get(m, strs[i]);
        if (v && strlen(v) > 512) {
            problem(out, outlen, &used, "key '%s': longer than 512 bytes", strs[i]);
            n++;
        }
    }
    v = tracer_manifest_get(m, "created");
    if (v && !valid_created(v)) {
        problem(out, outlen, &used,
                "key 'created': '%.40s' is not a UTC time "
                "YYYY-mm-ddTHH:MM:SSZ",
                v);
        n++;
    }
    for (size_t i = 0; i < m->n; i++) {
        uint64_t x;

        if (strncmp(m->keys[i], "events.", 7) == 0 && !parse_u64(m->vals[i], &x)) {
            problem(out, outlen, &used, "key '%s': '%.40s' is not an unsigned integer", m->keys[i], m->vals[i]);
            n++;
        }
    }
    return n;
}

int tracer_manifest_check_schema(const tracer_manifest *m, uint32_t trace_schema, char *msg, size_t msglen)
{
    uint64_t x;

    if (msg && msglen)
        msg[0] = '\0';
    if (!m || !parse_u64(tracer_manifest_get(m, "schema"), &x))
        return 0;
    if (x == trace_schema)
        return 0;
    if (msg && msglen)
        snprintf(msg, msglen,
                 "the MANIFEST says schema %" PRIu64 " but the trace's "
                 "run_begin says schema %" PRIu32,
                 x, trace_schema);
    return 1;
}

size_t tracer_manifest_count(const tracer_manifest *m) { return m ? m->n : 0; }

const char *tracer_manifest_key_at(const tracer_manifest *m, size_t i) { return (m && i < m->n) ? m->keys[i] : NULL; }

const char *tracer_manifest_value_at(const tracer_manifest *m, size_t i) { return (m && i < m->n) ? m->vals[i] : NULL; }

tracer_archive_status tracer_manifest_serialize(const tracer_manifest *m, char **out, size_t *out_len)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    size_t cap = 1, len = 0;
    char *buf = NULL;

    if (!m || !out) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "manifest: NULL argument");
        goto cleanup;
    }
    /* Worst case: every value byte becomes \xHH (4 bytes). */
    for (size_t i = 0; i < m->n; i++)
        cap += strlen(m->keys[i]) + 1 + 4 * strlen(m->vals[i]) + 1;
    buf = base_malloc(cap);
    if (!buf) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "manifest: out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i < m->n; i++) {
        size_t kl = strlen(m->keys[i]);

        memcpy(buf + len, m->keys[i], kl);
        len += kl;
        buf[len++] = '=';
        for (const char *p = m->vals[i]; *p; p++) {
            unsigned char c = (unsigned char)*p;

            switch (c) {
            case '\\':
                buf[len++] = '\\';
                buf[len++] = '\\';
                break;
            case '\n':
                buf[len++] = '\\';
                buf[len++] = 'n';
                break;
            case '\r':
                buf[len++] = '\\';
                buf[len++] = 'r';
                break;
            case '\t':
                buf[len++] = '\\';
                buf[len++] = 't';
                break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    len += (size_t)snprintf(buf + len, cap - len, "\\x%02x", c);
                } else {
                    buf[len++] = (char)c;
                }
            }
        }
        buf[len++] = '\n';
    }
    buf[len] = '\0';
    *out = buf;
    if (out_len)
        *out_len = len;
    buf = NULL;
cleanup:
    base_free(buf);
    return st;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

tracer_archive_status tracer_manifest_parse(const char *text, size_t len, const char *name, tracer_manifest **out)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    tracer_manifest *m = NULL;
    char *val = NULL;
    size_t pos = 0, lineno = 0;

    if (!name)
        name = TRACER_MANIFEST_FILE;
    if ((!text && len) || !out) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "manifest: NULL argument");
        goto cleanup;
    }
    *out = NULL;
    if (len > MANIFEST_MAX_BYTES) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ELIMIT, "%s: larger than %d bytes", name, MANIFEST_MAX_BYTES);
        goto cleanup;
    }
    if (text && memchr(text, '\0', len)) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT, "%s: contains a NUL byte", name);
        goto cleanup;
    }
    m = tracer_manifest_create();
    val = base_malloc(len + 1);
    if (!m || !val) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "manifest: out of memory");
        goto cleanup;
    }
    while (pos < len) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        const char *eq;
        size_t kl, vl = 0;
        char key[TRACER_MANIFEST_KEY_MAX + 1];

        pos += ll + (nl ? 1 : 0);
        lineno++;
        if (ll > 0 && line[ll - 1] == '\r')
            ll--;
        if (ll == 0 || line[0] == '#')
            continue;
        eq = memchr(line, '=', ll);
        if (!eq) {
            st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT, "%s:%zu: expected key=value", name, lineno);
            goto cleanup;
        }
        kl = (size_t)(eq - line);
        if (!key_valid(line, kl)) {
            st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT, "%s:%zu: invalid key '%.*s'", name, lineno,
                                     (int)(kl > 64 ? 64 : kl), line);
            goto cleanup;
        }
        memcpy(key, line, kl);
        key[kl] = '\0';
        for (const char *p = eq + 1; p < line + ll; p++) {
            unsigned char c = (unsigned char)*p;

            if (c < 0x20 && c != '\t') {
                st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT,
                                         "%s:%zu: control byte 0x%02x in "
                                         "value of '%s'",
                                         name, lineno, c, key);
                goto cleanup;
            }
            if (c != '\\') {
                val[vl++] = (char)c;
                continue;
            }
            if (++p >= line + ll) {
                st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT,
                                         "%s:%zu: dangling '\\' in value "
                                         "of '%s'",
                                         name, lineno, key);
                goto cleanup;
            }
            switch (*p) {
            case '\\': val[vl++] = '\\'; break;
            case 'n': val[vl++] = '\n'; break;
            case 'r': val[vl++] = '\r'; break;
            case 't': val[vl++] = '\t'; break;
            case 'x': {
                int hi = p + 1 < line + ll ? hexval(p[1]) : -1;
                int lo = p + 2 < line + ll ? hexval(p[2]) : -1;

                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                    st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT,
                                             "%s:%zu: bad \\x escape in "
                                             "value of '%s'",
                                             name, lineno, key);
                    goto cleanup;
                }
                val[vl++] = (char)(hi * 16 + lo);
                p += 2;
                break;
            }
            default:
                st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT,
                                         "%s:%zu: unknown escape '\\%c' in "
                                         "value of '%s'",
                                         name, lineno, *p, key);
                goto cleanup;
            }
        }
        val[vl] = '\0';
        st = manifest_put(m, key, val, false);
        if (st == TRACER_ARCHIVE_EEXIST) {
            st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT, "%s:%zu: duplicate key '%s'", name, lineno, key);
            goto cleanup;
        }
        if (st == TRACER_ARCHIVE_EINVAL) {
            st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT,
                                     "%s:%zu: value of '%s' longer than %d "
                                     "bytes",
                                     name, lineno, key, TRACER_MANIFEST_VALUE_MAX);
            goto cleanup;
        }
        if (st != TRACER_ARCHIVE_OK) {
            st = tracer_archive_fail(st, "manifest: out of memory");
            goto cleanup;
        }
    }
    *out = m;
    m = NULL;
cleanup:
    base_free(val);
    tracer_manifest_destroy(m);
    return st;
}

/* Read at most MANIFEST_MAX_BYTES from fd and parse; takes no ownership. */
tracer_archive_status tracer_manifest_read_fd(int fd, const char *name, tracer_manifest **out)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    char *buf = base_malloc(MANIFEST_MAX_BYTES + 1);
    size_t len = 0;

    if (!buf) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", name);
        goto cleanup;
    }
    for (;;) {
        ssize_t n = read(fd, buf + len, MANIFEST_MAX_BYTES + 1 - len);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", name, strerror(errno));
            goto cleanup;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > MANIFEST_MAX_BYTES) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ELIMIT, "%s: larger than %d bytes", name, MANIFEST_MAX_BYTES);
            goto cleanup;
        }
    }
    st = tracer_manifest_parse(buf, len, name, out);
cleanup:
    base_free(buf);
    return st;
}

tracer_archive_status tracer_manifest_read_file(const char *path, tracer_manifest **out)
{
    tracer_archive_status st;
    int fd = -1;

    if (!path || !out)
        return tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "manifest: NULL argument");
    *out = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        st = tracer_archive_fail(tracer_archive_errno_status(errno), "%s: %s", path, strerror(errno));
        goto cleanup;
    }
    st = tracer_manifest_read_fd(fd, path, out);
cleanup:
    if (fd >= 0)
        close(fd);
    return st;
}
