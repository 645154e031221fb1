/* similarity.c -- cosine similarity of op-type (or class) time vectors, average-linkage clustering, dendrogram. */
#include "analyze/similarity.h"

#include "analyze/out.h"
#include "base/alloc.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double analyze_cosine(const double *a, const double *b, size_t dim)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < dim; i++)
        ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
    if (aa <= 0 || bb <= 0)
        return 0.0;
    double c = ab / (sqrt(aa) * sqrt(bb));
    return c > 1.0 ? 1.0 : c < 0.0 ? 0.0 : c;
}

void analyze_sim_destroy(analyze_sim *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        base_free(s->labels[i]);
    for (size_t i = 0; i < s->dim; i++)
        base_free(s->dims[i]);
    base_free(s->labels), base_free(s->dims), base_free(s->vec), base_free(s->cos), base_free(s->merges),
        base_free(s->order);
    base_free(s);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static size_t find_str(char **v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return i;
    return n;
}

/* Leaves of cluster c in dendrogram order. */
static void leaves(const analyze_sim *s, size_t c, size_t **out)
{
    if (c < s->n) {
        *(*out)++ = c;
        return;
    }
    const analyze_merge *m = &s->merges[c - s->n];
    leaves(s, m->a, out);
    leaves(s, m->b, out);
}

analyze_sim *analyze_sim_create(analyze_profile *const *pp, size_t np, int by_class)
{
    analyze_sim *s = base_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    /* groups by label, dimensions by name */
    s->labels = base_calloc(np ? np : 1, sizeof *s->labels);
    size_t *group = base_calloc(np ? np : 1, sizeof *group);
    analyze_names dims = { 0 };
    if (!s->labels || !group)
        goto fail;
    for (size_t k = 0; k < np; k++) {
        char lb[256];
        analyze_out_label(pp[k], lb, sizeof lb);
        size_t g = find_str(s->labels, s->n, lb);
        if (g == s->n && !(s->labels[s->n++] = base_strdup(lb)))
            goto fail;
        group[k] = g;
        size_t nd = by_class ? pp[k]->nclasses : pp[k]->nops;
        for (size_t i = 0; i < nd; i++) {
            const char *name = by_class ? pp[k]->classes[i] : pp[k]->ops[i].name;
            if (!by_class && !pp[k]->ops[i].all.count)
                continue; /* no kept time: not a dimension */
            if (analyze_names_add(&dims, name))
                goto fail;
        }
    }
    if (!(s->dims = base_calloc(dims.n ? dims.n : 1, sizeof *s->dims)))
        goto fail;
    for (; s->dim < dims.n; s->dim++) /* the sim owns its dimensions' names */
        if (!(s->dims[s->dim] = base_strdup(dims.v[s->dim])))
            goto fail;
    analyze_names_free(&dims);
    qsort(s->dims, s->dim, sizeof *s->dims, cmp_str);
    size_t n = s->n;
    s->vec = base_calloc(n * (s->dim ? s->dim : 1), sizeof *s->vec);
    s->cos = base_calloc(n ? n * n : 1, sizeof *s->cos);
    s->merges = base_calloc(n ? n : 1, sizeof *s->merges);
    s->order = base_calloc(n ? n : 1, sizeof *s->order);
    if (!s->vec || !s->cos || !s->merges || !s->order)
        goto fail;
    for (size_t k = 0; k < np; k++) {
        const analyze_profile *p = pp[k];
        double *v = &s->vec[group[k] * s->dim];
        for (size_t i = 0; i < p->nops; i++) {
            const char *name = by_class ? p->classes[p->ops[i].cls] : p->ops[i].name;
            char **hit = bsearch(&name, s->dims, s->dim, sizeof *s->dims, cmp_str);
            if (hit)
                v[hit - s->dims] += (double)p->ops[i].all.ns;
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double c = analyze_cosine(&s->vec[i * s->dim], &s->vec[j * s->dim], s->dim);
            if (i == j && c > 0)
                c = 1.0;
            s->cos[i * n + j] = c;
        }
    /* average linkage (UPGMA) on d = 1 - cosine */
    if (n > 1) {
        size_t m = 2 * n - 1;
        double *d = base_malloc(m * m * sizeof *d);
        size_t *size = base_calloc(m, sizeof *size);
        int *alive = base_calloc(m, sizeof *alive);
        if (!d || !size || !alive) {
            base_free(d), base_free(size), base_free(alive);
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            size[i] = 1, alive[i] = 1;
            for (size_t j = 0; j < n; j++)
                d[i * m + j] = 1.0 - s->cos[i * n + j];
        }
        for (size_t step = 0; step < n - 1; step++) {
            size_t ba = 0, bb = 0;
            double best = INFINITY;
            for (size_t i = 0; i < n + step; i++)
                for (size_t j = i + 1; alive[i] && j < n + step; j++)
                    if (alive[j] && d[i * m + j] < best - 1e-15)
                        best = d[i * m + j], ba = i, bb = j;
            size_t c = n + step;
            s->merges[step] = (analyze_merge){ ba, bb, best, size[ba] + size[bb] };
            alive[ba] = alive[bb] = 0;
            alive[c] = 1;
            size[c] = size[ba] + size[bb];
            for (size_t k = 0; k < c; k++) {
                if (!alive[k])
                    continue;
                double v = ((double)size[ba] * d[k * m + ba] + (double)size[bb] * d[k * m + bb]) / (double)size[c];
                d[k * m + c] = d[c * m + k] = v;
            }
            d[c * m + c] = 0;
        }
        base_free(d), base_free(size), base_free(alive);
        size_t *o = s->order;
        leaves(s, 2 * n - 2, &o);
    } else if (n == 1) {
        s->order[0] = 0;
    }
    base_free(group);
    return s;
fail:
    base_free(group);
    analyze_names_free(&dims);
    analyze_sim_destroy(s);
    return NULL;
}

/* 0, or -1 on out of memory. */
static int dendrogram_text(FILE *f, const analyze_sim *s)
{
    size_t n = s->n;
    if (n < 2) {
        fprintf(f, "(one group: no clustering)\n");
        return 0;
    }
    size_t lw = 0;
    for (size_t i = 0; i < n; i++)
        if (strlen(s->labels[i]) > lw)
            lw = strlen(s->labels[i]);
    const size_t W = 48, rows = 2 * n - 1, cols = lw + 2 + W + 1;
    double maxh = s->merges[n - 2].distance > 0 ? s->merges[n - 2].distance : 1.0;
    char *g = base_malloc(rows * (cols + 1));
    size_t *row = base_malloc((2 * n - 1) * sizeof *row), *col = base_malloc((2 * n - 1) * sizeof *col);
    if (!g || !row || !col) {
        base_free(g), base_free(row), base_free(col);
        return -1;
    }
    memset(g, ' ', rows * (cols + 1));
    for (size_t r = 0; r < n; r++) {
        size_t leaf = s->order[r];
        row[leaf] = 2 * r;
        col[leaf] = lw + 1;
        memcpy(&g[2 * r * (cols + 1)], s->labels[leaf], strlen(s->labels[leaf]));
    }
    for (size_t k = 0; k < n - 1; k++) {
        const analyze_merge *m = &s->merges[k];
        size_t c = n + k;
        size_t x = lw + 2 + (size_t)lround(m->distance / maxh * (double)(W - 1));
        size_t ra = row[m->a], rb = row[m->b];
        if (ra > rb) {
            size_t t = ra;
            ra = rb, rb = t;
        }
        row[c] = (ra + rb) / 2;
        col[c] = x;
        size_t ch[2] = { m->a, m->b };
        for (int i = 0; i < 2; i++) {
            size_t r = row[ch[i]];
            for (size_t xx = col[ch[i]]; xx < x; xx++)
                if (g[r * (cols + 1) + xx] == ' ')
                    g[r * (cols + 1) + xx] = '-';
        }
        for (size_t r = ra; r <= rb; r++)
            g[r * (cols + 1) + x] = (r == ra || r == rb) ? '+' : '|';
    }
    for (size_t r = 0; r < rows; r++) {
        char *line = &g[r * (cols + 1)];
        size_t e = cols;
        while (e > 0 && line[e - 1] == ' ')
            e--;
        fprintf(f, "  %.*s\n", (int)e, line);
    }
    fprintf(f, "  %*s0%*s%.3f  (distance = 1 - cosine)\n", (int)(lw + 2), "", (int)(W - 2), "", maxh);
    base_free(g), base_free(row), base_free(col);
    return 0;
}

int analyze_similarity(FILE *f, const analyze_sim *s, int by_class, cli_format fmt)
{
    size_t n = s->n;
    if (fmt == CLI_JSON) {
        json_t *root = json_object(), *labels = json_array(), *dims = json_array(), *mat = json_array(),
               *merges = json_array(), *order = json_array();
        if (!root || !labels || !dims || !mat || !merges || !order) {
            json_decref(root), json_decref(labels), json_decref(dims), json_decref(mat), json_decref(merges),
                json_decref(order);
            return -1;
        }
        json_object_set_new(root, "schema", json_integer(1));
        json_object_set_new(root, "by", json_string(by_class ? "class" : "type"));
        for (size_t i = 0; i < n; i++)
            json_array_append_new(labels, json_string(s->labels[i]));
        for (size_t i = 0; i < s->dim; i++)
            json_array_append_new(dims, json_string(s->dims[i]));
        for (size_t i = 0; i < n; i++) {
            json_t *r = json_array();
            for (size_t j = 0; j < n; j++)
                json_array_append_new(r, json_real(s->cos[i * n + j]));
            json_array_append_new(mat, r);
        }
        for (size_t k = 0; k + 1 < n; k++)
            json_array_append_new(merges, json_pack("{s:I, s:I, s:f, s:I}", "a", (json_int_t)s->merges[k].a, "b",
                                                    (json_int_t)s->merges[k].b, "distance", s->merges[k].distance,
                                                    "size", (json_int_t)s->merges[k].size));
        for (size_t i = 0; i < n; i++)
            json_array_append_new(order, json_integer((json_int_t)s->order[i]));
        json_object_set_new(root, "labels", labels);
        json_object_set_new(root, "dimensions", dims);
        json_object_set_new(root, "cosine", mat);
        json_object_set_new(root, "merges", merges);
        json_object_set_new(root, "order", order);
        return analyze_out_json(f, root);
    }
    if (fmt == CLI_CSV) {
        fputs("label", f);
        for (size_t j = 0; j < n; j++) {
            fputc(',', f);
            analyze_out_csv_str(f, s->labels[j]);
        }
        fputc('\n', f);
        for (size_t i = 0; i < n; i++) {
            analyze_out_csv_str(f, s->labels[i]);
            for (size_t j = 0; j < n; j++)
                fprintf(f, ",%.6f", s->cos[i * n + j]);
            fputc('\n', f);
        }
        return ferror(f) ? -1 : 0;
    }
    fprintf(f, "== cosine similarity of op %s time vectors (%zu %s)\n", by_class ? "class" : "type", s->dim,
            by_class ? "classes" : "op types");
    size_t lw = 10;
    for (size_t i = 0; i < n; i++)
        if (strlen(s->labels[i]) > lw)
            lw = strlen(s->labels[i]);
    fprintf(f, "%-*s", (int)lw, "");
    for (size_t j = 0; j < n; j++)
        fprintf(f, " %6zu", j + 1);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%-*s", (int)lw, s->labels[i]);
        for (size_t j = 0; j < n; j++)
            fprintf(f, " %6.3f", s->cos[i * n + j]);
        fprintf(f, "   (%zu)\n", i + 1);
    }
    fprintf(f, "\n== average-linkage clustering\n");
    for (size_t k = 0; k + 1 < n; k++) {
        const analyze_merge *m = &s->merges[k];
        fprintf(f, "  %2zu: distance %.4f  {", k + 1, m->distance);
        /* print the leaves of both sides */
        size_t *buf = base_malloc(n * sizeof *buf), *e = buf;
        if (!buf)
            return -1;
        leaves(s, n + k, &e);
        for (size_t *q = buf; q < e; q++)
            fprintf(f, "%s%s", q == buf ? "" : ", ", s->labels[*q]);
        base_free(buf);
        fprintf(f, "}\n");
    }
    fputc('\n', f);
    return dendrogram_text(f, s) || ferror(f) ? -1 : 0;
}

/* ---- the row ------------------------------------------------------------------------- */
static analyze_status create(analyze_profile *const *p, size_t n, const analyze_options *o, void **out)
{
    analyze_sim *s = analyze_sim_create(p, n, o->by_class);
    if (!s)
        return analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
    *out = s;
    return ANALYZE_OK;
}

static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    return analyze_out_status(f, analyze_similarity(f, r, o->by_class, fmt));
}

static void destroy(void *r) { analyze_sim_destroy(r); }

const analyze_analysis analyze_row_similarity = {
    .name = "similarity",
    .args = "[options] [--by type|class] TRACE...",
    .summary = "cosine similarity of op-type time vectors, average-linkage\n"
               "clustering on 1 - cosine, printed as a dendrogram",
    .about = "Cosine similarity of the traces' op-type (or class) time vectors and their\n"
             "average-linkage clustering on 1 - cosine, printed as a dendrogram.\n",
    .options = "  --by type|class         vectors of op types (default) or of classes\n",
    .takes = ANALYZE_TAKES_BY | ANALYZE_TAKES_WINDOW,
    .min_traces = 1,
    .create = create,
    .print = print,
    .destroy = destroy,
};
