/* text.c -- seq2seq's data: a synthetic translation task and a loader for
 * parallel text files (one sentence per line, whitespace tokens). */
#include "models/seqdata.h"

#include "base/alloc.h"
#include "exec/rng.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

exec_status model_seq_read_file(const char *path, size_t max_bytes, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return exec_fail(EXEC_ERR_IO, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *b = base_malloc(cap + 1);
    if (!b) {
        fclose(f);
        return exec_fail(EXEC_ERR_NOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (n == cap) {
            if (cap >= max_bytes) {
                base_free(b);
                fclose(f);
                return exec_fail(EXEC_ERR_IO, "%s: larger than %zu bytes", path, max_bytes);
            }
            size_t nc = cap * 2 > max_bytes ? max_bytes : cap * 2;
            char *nb = base_realloc(b, nc + 1);
            if (!nb) {
                base_free(b);
                fclose(f);
                return exec_fail(EXEC_ERR_NOMEM, "%s: out of memory", path);
            }
            b = nb;
            cap = nc;
        }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) {
                base_free(b);
                fclose(f);
                return exec_fail(EXEC_ERR_IO, "%s: read error", path);
            }
            break;
        }
    }
    fclose(f);
    b[n] = '\0';
    *buf = b;
    *len = n;
    return EXEC_OK;
}

void model_text_destroy(model_text_corpus *c)
{
    if (!c)
        return;
    base_free(c->src);
    base_free(c->tgt);
    base_free(c);
}

exec_status model_text_corpus_new(int n, int src_len, int tgt_len, int sv, int tv, model_text_corpus **out)
{
    model_text_corpus *c = base_calloc(1, sizeof *c);
    if (!c)
        return exec_fail(EXEC_ERR_NOMEM, "text: out of memory");
    c->n = n;
    c->src_len = src_len;
    c->tgt_len = tgt_len;
    c->src_vocab = sv;
    c->tgt_vocab = tv;
    c->src = base_calloc((size_t)n * src_len, sizeof *c->src);
    c->tgt = base_calloc((size_t)n * tgt_len, sizeof *c->tgt);
    if (!c->src || !c->tgt) {
        model_text_destroy(c);
        return exec_fail(EXEC_ERR_NOMEM, "text: out of memory");
    }
    *out = c;
    return EXEC_OK;
}

/* ---- the synthetic task ------------------------------------------------- */

/* A bijection on word ranks that stays within blocks of 16 ranks (so target
 * words keep roughly the source word's frequency); ranks in a last partial
 * block map to themselves; ranks beyond the target vocabulary wrap. */
static int32_t map_word(int32_t w, int src_vocab, int tgt_vocab)
{
    if (w < MODEL_TEXT_FIRST)
        return w;
    int32_t r = w - MODEL_TEXT_FIRST, words = tgt_vocab - MODEL_TEXT_FIRST;
    int32_t full = (src_vocab - MODEL_TEXT_FIRST) / 16 * 16;
    int32_t m = r < full ? (r & ~15) | (((r & 15) * 5 + 3) & 15) : r;
    return MODEL_TEXT_FIRST + m % words;
}

int model_text_synth_translate(const int32_t *src, int len, int src_vocab, int tgt_vocab, int32_t *tgt)
{
    for (int i = 0; i < len; i++) {
        int j = (i ^ 1) < len ? (i ^ 1) : i; /* swap adjacent pairs */
        tgt[i] = map_word(src[j], src_vocab, tgt_vocab);
    }
    tgt[len] = MODEL_TEXT_EOS;
    return len + 1;
}

exec_status model_text_synth(int n, int src_len, int tgt_len, int src_vocab, int tgt_vocab, uint64_t seed,
                             model_text_corpus **out)
{
    *out = NULL;
    if (n <= 0 || src_len < 2 || tgt_len <= src_len || src_vocab < MODEL_TEXT_FIRST + 8 ||
        tgt_vocab < MODEL_TEXT_FIRST + 8)
        return exec_fail(EXEC_ERR_ARG, "text: bad synthetic task (n %d, src %d, tgt %d, vocab %d/%d)", n, src_len,
                         tgt_len, src_vocab, tgt_vocab);
    model_text_corpus *c;
    exec_status s = model_text_corpus_new(n, src_len, tgt_len, src_vocab, tgt_vocab, &c);
    if (s)
        return s;
    exec_rng r = exec_rng_make(seed ^ 0x7e47ull);
    double lw = log((double)(src_vocab - MODEL_TEXT_FIRST) + 1.0);
    int minlen = src_len / 3 > 2 ? src_len / 3 : 2;
    for (int i = 0; i < n; i++) {
        int len = minlen + (int)exec_rng_below(&r, (uint32_t)(src_len - minlen + 1));
        int32_t *sp = c->src + (size_t)i * src_len;
        for (int t = 0; t < len; t++) {
            /* log-uniform (Zipf-like) ranks: what TF's candidate sampler assumes */
            int32_t rank = (int32_t)floor(exp(exec_rng_uniform(&r) * lw)) - 1;
            if (rank < 0)
                rank = 0;
            if (rank > src_vocab - MODEL_TEXT_FIRST - 1)
                rank = src_vocab - MODEL_TEXT_FIRST - 1;
            sp[t] = MODEL_TEXT_FIRST + rank;
        }
        model_text_synth_translate(sp, len, src_vocab, tgt_vocab, c->tgt + (size_t)i * tgt_len);
    }
    *out = c;
    return EXEC_OK;
}

/* ---- the parallel-text loader ------------------------------------------- */

typedef struct side {
    char *buf;
    size_t len;
    char **tok; /* every token, in order */
    size_t ntok, captok;
    size_t *line_start; /* per line: first token; nlines + 1 entries */
    size_t nlines, caplines;
} side;

typedef struct vword {
    const char *w;
    size_t count;
    int32_t id;
} vword;

static void side_free(side *s)
{
    base_free(s->buf);
    base_free(s->tok);
    base_free(s->line_start);
}

static int push_line(side *s, size_t first)
{
    if (base_grow(&s->line_start, &s->caplines, s->nlines + 2, sizeof *s->line_start))
        return -1;
    s->line_start[s->nlines++] = first;
    return 0;
}

/* Splits the buffer in place into lines of tokens. */
static exec_status side_read(side *s, const char *path)
{
    exec_status st = model_seq_read_file(path, (size_t)1 << 31, &s->buf, &s->len);
    if (st)
        return st;
    if (s->len == 0)
        return exec_fail(EXEC_ERR_IO, "%s: empty file", path);
    if (memchr(s->buf, '\0', s->len))
        return exec_fail(EXEC_ERR_IO, "%s: not a text file (NUL byte at offset %zu)", path,
                         (size_t)((char *)memchr(s->buf, '\0', s->len) - s->buf));
    char *p = s->buf, *end = s->buf + s->len;
    while (p < end) {
        if (push_line(s, s->ntok))
            return exec_fail(EXEC_ERR_NOMEM, "%s: out of memory", path);
        char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        *eol = '\0';
        char *q = p;
        for (;;) {
            while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\v' || *q == '\f')
                q++;
            if (!*q)
                break;
            char *w = q;
            while (*q && *q != ' ' && *q != '\t' && *q != '\r' && *q != '\v' && *q != '\f')
                q++;
            if (base_grow(&s->tok, &s->captok, s->ntok + 1, sizeof *s->tok))
                return exec_fail(EXEC_ERR_NOMEM, "%s: out of memory", path);
            s->tok[s->ntok++] = w;
            if (*q)
                *q++ = '\0';
        }
        p = eol + 1;
    }
    if (push_line(s, s->ntok))
        return exec_fail(EXEC_ERR_NOMEM, "%s: out of memory", path);
    s->nlines--; /* the sentinel */
    if (s->ntok == 0)
        return exec_fail(EXEC_ERR_IO, "%s: no tokens", path);
    return EXEC_OK;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }
static int cmp_vword_str(const void *a, const void *b) { return strcmp(((const vword *)a)->w, ((const vword *)b)->w); }
static int cmp_vword_freq(const void *a, const void *b)
{
    const vword *x = *(const vword *const *)a, *y = *(const vword *const *)b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->w, y->w);
}

/* Builds the vocabulary (sorted by string, with ids by frequency). */
static exec_status build_vocab(const side *s, int vocab, vword **out, size_t *nout)
{
    *out = NULL;
    const char **sorted = base_malloc(s->ntok * sizeof *sorted);
    if (!sorted)
        return exec_fail(EXEC_ERR_NOMEM, "text: out of memory");
    memcpy(sorted, s->tok, s->ntok * sizeof *sorted);
    qsort(sorted, s->ntok, sizeof *sorted, cmp_str);
    vword *v = base_malloc(s->ntok * sizeof *v);
    vword **byfreq = base_malloc(s->ntok * sizeof *byfreq);
    if (!v || !byfreq) {
        base_free(sorted);
        base_free(v);
        base_free(byfreq);
        return exec_fail(EXEC_ERR_NOMEM, "text: out of memory");
    }
    size_t nv = 0;
    for (size_t i = 0; i < s->ntok; i++) {
        if (nv && strcmp(v[nv - 1].w, sorted[i]) == 0)
            v[nv - 1].count++;
        else
            v[nv++] = (vword){ sorted[i], 1, MODEL_TEXT_UNK };
    }
    for (size_t i = 0; i < nv; i++)
        byfreq[i] = &v[i];
    qsort(byfreq, nv, sizeof *byfreq, cmp_vword_freq);
    size_t keep = (size_t)(vocab - MODEL_TEXT_FIRST);
    for (size_t i = 0; i < nv && i < keep; i++)
        byfreq[i]->id = MODEL_TEXT_FIRST + (int32_t)i;
    base_free(byfreq);
    base_free(sorted);
    *out = v;
    *nout = nv;
    return EXEC_OK;
}

static int32_t lookup(const vword *v, size_t nv, const char *w)
{
    vword key = { w, 0, 0 };
    const vword *f = bsearch(&key, v, nv, sizeof *v, cmp_vword_str);
    return f ? f->id : MODEL_TEXT_UNK;
}

exec_status model_text_load(const char *src_path, const char *tgt_path, int src_len, int tgt_len, int src_vocab,
                            int tgt_vocab, model_text_corpus **out)
{
    *out = NULL;
    if (src_len < 1 || tgt_len < 2 || src_vocab <= MODEL_TEXT_FIRST || tgt_vocab <= MODEL_TEXT_FIRST)
        return exec_fail(EXEC_ERR_ARG, "text: bad sizes");
    side a = { 0 }, b = { 0 };
    vword *va = NULL, *vb = NULL;
    size_t nva = 0, nvb = 0;
    model_text_corpus *c = NULL;
    exec_status st;
    if ((st = side_read(&a, src_path)) || (st = side_read(&b, tgt_path)))
        goto done;
    if (a.nlines != b.nlines) {
        st = exec_fail(EXEC_ERR_IO, "%s has %zu lines but %s has %zu: not parallel text", src_path, a.nlines, tgt_path,
                       b.nlines);
        goto done;
    }
    if ((st = build_vocab(&a, src_vocab, &va, &nva)) || (st = build_vocab(&b, tgt_vocab, &vb, &nvb)))
        goto done;
    size_t fit = 0;
    for (size_t i = 0; i < a.nlines; i++) {
        size_t ls = a.line_start[i + 1] - a.line_start[i], lt = b.line_start[i + 1] - b.line_start[i];
        fit += ls > 0 && lt > 0 && ls <= (size_t)src_len && lt + 1 <= (size_t)tgt_len;
    }
    if (fit == 0) {
        st = exec_fail(EXEC_ERR_IO, "%s, %s: no sentence pair fits %d source and %d target tokens", src_path, tgt_path,
                       src_len, tgt_len - 1);
        goto done;
    }
    if (fit > (size_t)1 << 30) {
        st = exec_fail(EXEC_ERR_IO, "%s: too many sentences", src_path);
        goto done;
    }
    if ((st = model_text_corpus_new((int)fit, src_len, tgt_len, src_vocab, tgt_vocab, &c)))
        goto done;
    size_t k = 0;
    for (size_t i = 0; i < a.nlines; i++) {
        size_t ls = a.line_start[i + 1] - a.line_start[i], lt = b.line_start[i + 1] - b.line_start[i];
        if (!(ls > 0 && lt > 0 && ls <= (size_t)src_len && lt + 1 <= (size_t)tgt_len))
            continue;
        int32_t *sp = c->src + k * (size_t)src_len, *tp = c->tgt + k * (size_t)tgt_len;
        for (size_t t = 0; t < ls; t++)
            sp[t] = lookup(va, nva, a.tok[a.line_start[i] + t]);
        for (size_t t = 0; t < lt; t++)
            tp[t] = lookup(vb, nvb, b.tok[b.line_start[i] + t]);
        tp[lt] = MODEL_TEXT_EOS;
        k++;
    }
    *out = c;
done:
    base_free(va);
    base_free(vb);
    side_free(&a);
    side_free(&b);
    return st;
}
