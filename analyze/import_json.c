/* import_json.c -- bounded-memory, element-by-element JSON input
 * (import_json.h). */
#include "analyze/import_json.h"
#include "analyze/analyze_status.h"
#include "base/alloc.h"

#include <archive.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHUNK (1u << 20)

struct analyze_json_in {
    struct archive *a;
    char *buf;
    size_t cap, len, pos; /* buf[pos, len) not consumed yet */
    uint64_t base;        /* input offset of buf[0] */
    int eof;
    char path[256];
};

analyze_json_in *analyze_json_open(const char *path)
{
    analyze_json_in *j = base_calloc(1, sizeof *j);
    struct archive_entry *entry = NULL;
    if (!j || !(j->buf = base_malloc(CHUNK)) || !(j->a = archive_read_new())) {
        analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    snprintf(j->path, sizeof j->path, "%s", path);
    j->cap = CHUNK;
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: empty file", path);
        goto fail;
    }
    archive_read_support_filter_all(j->a);
    archive_read_support_format_raw(j->a);
    if (archive_read_open_filename(j->a, path, 1 << 16) != ARCHIVE_OK) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: cannot read: %s", path, archive_error_string(j->a));
        goto fail;
    }
    int r = archive_read_next_header(j->a, &entry);
    if (r == ARCHIVE_EOF) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: empty file", path);
        goto fail;
    }
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: cannot read: %s", path, archive_error_string(j->a));
        goto fail;
    }
    return j;
fail:
    analyze_json_close(j);
    return NULL;
}

void analyze_json_close(analyze_json_in *j)
{
    if (!j)
        return;
    if (j->a)
        archive_read_free(j->a);
    base_free(j->buf);
    base_free(j);
}

/* Read more input after buf[len]: moves the unconsumed bytes to the front,
 * grows the buffer (up to the element limit) when it is full.  0: got some
 * or at the end (j->eof); -1: error. */
static int refill(analyze_json_in *j)
{
    if (j->eof)
        return 0;
    if (j->pos) {
        memmove(j->buf, j->buf + j->pos, j->len - j->pos);
        j->len -= j->pos;
        j->base += j->pos;
        j->pos = 0;
    }
    if (j->len == j->cap) {
        if (j->cap >= ANALYZE_JSON_ELEMENT_MAX) {
            analyze_fail(ANALYZE_ERR_INPUT, "%s: an element at byte %llu is larger than %u MiB", j->path,
                         (unsigned long long)j->base, ANALYZE_JSON_ELEMENT_MAX >> 20);
            return -1;
        }
        char *nb = base_realloc(j->buf, j->cap * 2);
        if (!nb) {
            analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", j->path);
            return -1;
        }
        j->buf = nb;
        j->cap *= 2;
    }
    la_ssize_t n = archive_read_data(j->a, j->buf + j->len, j->cap - j->len);
    if (n < 0) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: cannot read: %s", j->path, archive_error_string(j->a));
        return -1;
    }
    if (n == 0)
        j->eof = 1;
    j->len += (size_t)n;
    return 0;
}

static int blank(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int analyze_json_peek(analyze_json_in *j)
{
    for (;;) {
        while (j->pos < j->len && blank((unsigned char)j->buf[j->pos]))
            j->pos++;
        if (j->pos < j->len)
            return (unsigned char)j->buf[j->pos];
        if (j->eof)
            return -1;
        if (refill(j))
            return -2;
    }
}

void analyze_json_skip(analyze_json_in *j)
{
    if (j->pos < j->len)
        j->pos++;
}

/* Length of the value at buf[pos] if it ends inside the buffer, else 0. */
static size_t extent(const analyze_json_in *j, int *bad)
{
    const char *s = j->buf + j->pos;
    size_t n = j->len - j->pos, i = 0;
    int depth = 0, in_str = 0;
    *bad = 0;
    if (!n)
        return 0;
    if (s[0] != '{' && s[0] != '[' && s[0] != '"') { /* a scalar: up to a delimiter */
        while (i < n && !blank((unsigned char)s[i]) && s[i] != ',' && s[i] != ']' && s[i] != '}' && s[i] != ':')
            i++;
        return i < n || j->eof ? i : 0;
    }
    for (; i < n; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"') {
                in_str = 0;
                if (depth == 0)
                    return i + 1;
            }
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth < 0) {
                *bad = 1;
                return 0;
            }
            if (depth == 0)
                return i + 1;
        }
    }
    return 0;
}

const char *analyze_json_value(analyze_json_in *j, size_t *len)
{
    int c = analyze_json_peek(j);
    if (c == -2)
        return NULL;
    if (c == -1) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: truncated JSON: the input ends at byte %llu where a value was expected",
                     j->path, (unsigned long long)(j->base + j->len));
        return NULL;
    }
    for (;;) {
        int bad = 0;
        size_t n = extent(j, &bad);
        if (bad) {
            analyze_fail(ANALYZE_ERR_INPUT, "%s: not JSON: unbalanced bracket after byte %llu", j->path,
                         (unsigned long long)(j->base + j->pos));
            return NULL;
        }
        if (n) {
            *len = n;
            return j->buf + j->pos;
        }
        if (j->eof) {
            analyze_fail(ANALYZE_ERR_INPUT, "%s: truncated JSON: the input ends inside the value at byte %llu", j->path,
                         (unsigned long long)(j->base + j->pos));
            return NULL;
        }
        if (refill(j))
            return NULL;
    }
}

const char *analyze_json_buffered(const analyze_json_in *j, size_t *avail)
{
    *avail = j->len - j->pos;
    return j->buf + j->pos;
}

void analyze_json_consume(analyze_json_in *j, size_t len) { j->pos = len <= j->len - j->pos ? j->pos + len : j->len; }

uint64_t analyze_json_offset(const analyze_json_in *j) { return j->base + j->pos; }

/* The member `key` (quoted, e.g. "\"ts\"") of the object text s[0..len),
 * at its top level: the offset of its value, or -1. */
static long member_at(const char *s, size_t len, const char *key)
{
    size_t klen = strlen(key);
    int depth = 0, in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == '"') {
            if (depth == 1 && i + klen <= len && memcmp(s + i, key, klen) == 0) {
                size_t k = i + klen;
                while (k < len && blank((unsigned char)s[k]))
                    k++;
                if (k < len && s[k] == ':') {
                    for (k++; k < len && blank((unsigned char)s[k]);)
                        k++;
                    return (long)k;
                }
            }
            in_str = 1;
        }
    }
    return -1;
}

int analyze_json_us_to_ns(const char *obj, size_t len, const char *key, int64_t *ns)
{
    long at = member_at(obj, len, key);
    if (at < 0)
        return -1;
    return analyze_json_text_us_to_ns(obj + at, obj + len, ns);
}

int analyze_json_text_us_to_ns(const char *p, const char *end, int64_t *ns)
{
    if (p < end && *p == '-')
        return -2;
    uint64_t whole = 0, frac = 0;
    int nd = 0, nf = 0, round_up = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++, nd++) {
        if (whole > (UINT64_C(9200000000000000000) / 1000 - 9) / 10)
            return -2;
        whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (!nd)
        return -2;
    if (p < end && *p == '.') {
        for (p++; p < end && *p >= '0' && *p <= '9'; p++, nf++) {
            if (nf < 3)
                frac = frac * 10 + (uint64_t)(*p - '0');
            else if (nf == 3)
                round_up = *p >= '5';
        }
        if (!nf)
            return -2;
    }
    if (p < end && (*p == 'e' || *p == 'E'))
        return 1; /* exponent notation: the caller's double will do */
    for (; nf < 3; nf++)
        frac *= 10;
    *ns = (int64_t)(whole * 1000 + frac + (uint64_t)round_up);
    return 0;
}

/* Whether the integer literal s[0..n) (an optional '-', digits) is beyond
 * int64_t. */
static int beyond_64_bits(const char *s, size_t n)
{
    int neg = n && *s == '-';
    s += neg, n -= (size_t)neg;
    while (n > 1 && *s == '0')
        s++, n--;
    const char *lim = neg ? "9223372036854775808" : "9223372036854775807";
    return n > 19 || (n == 19 && memcmp(s, lim, 19) > 0);
}

char *analyze_json_quote_big_ints(const char *v, size_t len, size_t *outlen, uint64_t *quoted)
{
    char *o = base_malloc(len + len / 2 + 3), *w = o; /* a quoted number is at least 20 bytes: 2 more */
    if (!o)
        return NULL;
    *quoted = 0;
    int in_str = 0;
    for (size_t i = 0; i < len;) {
        char c = v[i];
        if (in_str) {
            *w++ = c, i++;
            if (c == '\\' && i < len)
                *w++ = v[i++];
            else if (c == '"')
                in_str = 0;
            continue;
        }
        if (c == '"') {
            in_str = 1;
            *w++ = c, i++;
            continue;
        }
        if (c != '-' && !(c >= '0' && c <= '9')) {
            *w++ = c, i++;
            continue;
        }
        size_t k = i + (c == '-'), frac = 0;
        while (k < len && v[k] >= '0' && v[k] <= '9')
            k++;
        size_t digits_end = k;
        while (k < len && (v[k] == '.' || v[k] == 'e' || v[k] == 'E' || v[k] == '+' || v[k] == '-' ||
                           (v[k] >= '0' && v[k] <= '9')))
            k++, frac = 1;
        if (!frac && beyond_64_bits(v + i, digits_end - i)) {
            *w++ = '"';
            memcpy(w, v + i, k - i);
            w += k - i;
            *w++ = '"';
            ++*quoted;
        } else {
            memcpy(w, v + i, k - i);
            w += k - i;
        }
        i = k;
    }
    *outlen = (size_t)(w - o);
    return o;
}
