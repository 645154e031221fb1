/* import_scan.c -- one trace event scanned in place (import_scan.h). */
#include "analyze/import_scan.h"

#include <string.h>

static int blank(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static const char *skip_blank(const char *p, const char *end)
{
    while (p < end && blank((unsigned char)*p))
        p++;
    return p;
}

/* The byte after the string at p (at its opening quote); NULL for a string
 * outside the subset (an escape, a control byte, a byte beyond ASCII) or
 * one cut short. */
static const char *string_end(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c == '\\' || c < 0x20 || c >= 0x80)
            return NULL;
    }
    return NULL;
}

static int digit(int c) { return c >= '0' && c <= '9'; }

/* The byte after the number at p; NULL for one outside the subset. */
static const char *number_end(const char *p, const char *end)
{
    const char *q = p + (p < end && *p == '-');
    const char *d = q;
    if (q < end && *q == '0')
        q++;
    else if (q < end && *q >= '1' && *q <= '9')
        while (q < end && digit(*q))
            q++;
    else
        return NULL;
    int real = 0;
    if (q < end && *q == '.') {
        real = 1;
        if (++q == end || !digit(*q))
            return NULL;
        while (q < end && digit(*q))
            q++;
    }
    if (q < end && (*q == 'e' || *q == 'E'))
        return NULL; /* an exponent: jansson's (it may overflow) */
    if (real ? q - p > 40 : q - d > 18)
        return NULL; /* beyond 64 bits, or a decimal long enough to overflow */
    return q;
}

typedef struct want {
    const char *key; /* with its quotes */
    size_t klen;
    size_t off;             /* of its analyze_scan_text in analyze_scan_event */
    const struct want *sub; /* an object value is scanned for these members */
    size_t nsub;
} want;

#define W(k, m)                                                              \
    {                                                                        \
        "\"" k "\"", sizeof(k) + 1, offsetof(analyze_scan_event, m), NULL, 0 \
    }
static const want args_want[] = {
    W("Input Dims", dims), W("Input type", types), W("Concrete Inputs", concrete),
    W("External id", ext), W("correlation", corr),
};
static const want event_want[] = {
    W("ph", ph),
    W("name", name),
    W("cat", cat),
    W("ts", ts),
    W("dur", dur),
    W("pid", pid),
    W("tid", tid),
    { "\"args\"", 6, offsetof(analyze_scan_event, args), args_want, sizeof args_want / sizeof *args_want },
};
#undef W

static const char *object(const char *p, const char *end, int depth, const want *w, size_t nw, analyze_scan_event *e);
static const char *array(const char *p, const char *end, int depth);

const char *analyze_scan_value(const char *p, const char *end, int depth)
{
    if (p == end)
        return NULL;
    switch (*p) {
    case '"': return string_end(p, end);
    case '{': return object(p, end, depth + 1, NULL, 0, NULL);
    case '[': return array(p, end, depth + 1);
    case 't': return end - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f': return end - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n': return end - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default: return number_end(p, end);
    }
}

static const char *array(const char *p, const char *end, int depth)
{
    if (depth > ANALYZE_SCAN_DEPTH)
        return NULL;
    p = skip_blank(p + 1, end);
    if (p < end && *p == ']')
        return p + 1;
    for (;;) {
        if (!(p = analyze_scan_value(p, end, depth)))
            return NULL;
        p = skip_blank(p, end);
        if (p == end)
            return NULL;
        if (*p == ']')
            return p + 1;
        if (*p != ',')
            return NULL;
        p = skip_blank(p + 1, end);
    }
}

/* An object at p; the members of w (when e) recorded in e, each once. */
static const char *object(const char *p, const char *end, int depth, const want *w, size_t nw, analyze_scan_event *e)
{
    if (depth > ANALYZE_SCAN_DEPTH)
        return NULL;
    p = skip_blank(p + 1, end);
    if (p < end && *p == '}')
        return p + 1;
    for (;;) {
        if (p == end || *p != '"')
            return NULL;
        const char *k = p;
        if (!(p = string_end(p, end)))
            return NULL;
        size_t klen = (size_t)(p - k);
        p = skip_blank(p, end);
        if (p == end || *p != ':')
            return NULL;
        p = skip_blank(p + 1, end);
        const want *m = NULL;
        for (size_t i = 0; i < nw; i++)
            if (w[i].klen == klen && memcmp(w[i].key, k, klen) == 0) {
                m = &w[i];
                break;
            }
        const char *v = p;
        if (m && m->sub && p < end && *p == '{')
            p = object(p, end, depth + 1, m->sub, m->nsub, e);
        else
            p = analyze_scan_value(p, end, depth);
        if (!p)
            return NULL;
        if (m) {
            analyze_scan_text *t = (analyze_scan_text *)(void *)((char *)e + m->off);
            if (t->p)
                return NULL; /* a member twice: jansson keeps the last */
            t->p = v;
            t->n = (size_t)(p - v);
        }
        p = skip_blank(p, end);
        if (p == end)
            return NULL;
        if (*p == '}')
            return p + 1;
        if (*p != ',')
            return NULL;
        p = skip_blank(p + 1, end);
    }
}

size_t analyze_scan_event_prefix(const char *s, size_t avail, analyze_scan_event *e)
{
    memset(e, 0, sizeof *e);
    const char *end = s + avail, *p = skip_blank(s, end);
    if (p == end || *p != '{')
        return 0;
    p = object(p, end, 1, event_want, sizeof event_want / sizeof *event_want, e);
    return p ? (size_t)(p - s) : 0;
}

int analyze_scan_event_text(const char *s, size_t len, analyze_scan_event *e)
{
    size_t n = analyze_scan_event_prefix(s, len, e);
    return n && skip_blank(s + n, s + len) == s + len ? 0 : 1;
}

int analyze_scan_integer(analyze_scan_text v, int64_t *x)
{
    if (!v.p || !v.n)
        return 0;
    size_t i = v.p[0] == '-';
    if (i == v.n)
        return 0;
    uint64_t u = 0;
    for (size_t k = i; k < v.n; k++) {
        if (!digit(v.p[k]) || k - i >= 18)
            return 0;
        u = u * 10 + (uint64_t)(v.p[k] - '0');
    }
    *x = i ? -(int64_t)u : (int64_t)u;
    return 1;
}
