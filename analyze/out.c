/* out.c -- the output helpers the analyses share (out.h). */
#include "analyze/out.h"

#include "base/alloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int analyze_out_width(int w, const char *name)
{
    size_t n = strlen(name);
    return n > (size_t)w ? (int)n : w;
}

int analyze_out_json(FILE *f, json_t *root)
{
    if (!root)
        return -1;
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    json_decref(root);
    if (rc == 0 && fputc('\n', f) == EOF)
        rc = -1;
    return rc;
}

analyze_status analyze_out_status(FILE *f, int rc)
{
    if (ferror(f))
        return analyze_fail(ANALYZE_ERR_IO, "cannot write the output");
    return rc ? analyze_fail(ANALYZE_ERR_NOMEM, "out of memory") : ANALYZE_OK;
}

void analyze_out_xml(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

void analyze_out_csv_str(FILE *f, const char *s)
{
    if (!s)
        s = "";
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }

    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }

    fputc('"', f);
}

const char *analyze_out_label(const analyze_profile *p, char *buf, size_t len)
{
    if (p->rank >= 0) /* one rank of a job: the ranks apart */
        snprintf(buf, len, "%s/%s/rank%lld", analyze_profile_model(p), analyze_profile_mode(p), (long long)p->rank);
    else
        snprintf(buf, len, "%s/%s", analyze_profile_model(p), analyze_profile_mode(p));
    return buf;
}

const char *analyze_out_bytes(uint64_t b, char *buf, size_t len)
{
    if (b >= (1ull << 30))
        snprintf(buf, len, "%.2f GiB", (double)b / (double)(1ull << 30));
    else if (b >= (1ull << 20))
        snprintf(buf, len, "%.2f MiB", (double)b / (double)(1ull << 20));
    else if (b >= 1024)
        snprintf(buf, len, "%.2f KiB", (double)b / 1024.0);
    else
        snprintf(buf, len, "%llu B", (unsigned long long)b);
    return buf;
}

json_t *analyze_out_jstr(const char *s) { return s && *s ? json_string(s) : json_null(); }

json_t *analyze_out_jreal(double v) { return isfinite(v) ? json_real(v) : json_null(); }

const char *analyze_out_or_unknown(const char *s) { return s && *s ? s : "?"; }

void analyze_out_csv_num(FILE *f, const char *fmt, double v)
{
    fputc(',', f);
    if (isfinite(v))
        fprintf(f, fmt, v);
}

void analyze_out_text_real(FILE *f, int w, int prec, double v)
{
    if (isfinite(v))
        fprintf(f, " %*.*f", w, prec, v);
    else
        fprintf(f, " %*s", w, "-");
}

size_t analyze_names_index(const analyze_names *l, const char *s)
{
    size_t i = 0;
    while (i < l->n && strcmp(l->v[i], s) != 0)
        i++;
    return i;
}

int analyze_names_add(analyze_names *l, const char *s)
{
    if (analyze_names_index(l, s) < l->n)
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        const char **v = base_realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = s;
    return 0;
}

void analyze_names_free(analyze_names *l)
{
    base_free(l->v);
    *l = (analyze_names){ 0 };
}
