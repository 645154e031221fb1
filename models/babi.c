/* babi.c -- memnet's data: bAbI stories. A parser for the real bAbI text
 * format and a generator of task-1 ("single supporting fact") stories that
 * writes that format and parses it back.
 *
 *   1 Mary moved to the bathroom.
 *   2 John went to the hallway.
 *   3 Where is Mary? \tbathroom\t1
 *
 * Sentence numbers restart at 1 with each story; a question line carries
 * the answer and the supporting sentence numbers after tabs. */
#include "models/seqdata.h"

#include "base/alloc.h"
#include "exec/rng.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BABI_MAX_WORDS 64 /* per sentence */
#define BABI_MAX_LINE 4096

typedef struct sent {
    size_t first, count; /* tokens */
    const char *answer;  /* NULL for a statement */
    size_t story;
    long line;
} sent;

typedef struct parse {
    char **tok;
    size_t ntok, captok;
    sent *s;
    size_t ns, caps;
} parse;

static int push_tok(parse *p, char *t)
{
    if (p->ntok == p->captok) {
        size_t nc = p->captok ? p->captok * 2 : 1024;
        char **n = exec_realloc(p->tok, nc * sizeof *n);
        if (!n)
            return -1;
        p->tok = n;
        p->captok = nc;
    }
    p->tok[p->ntok++] = t;
    return 0;
}

static int push_sent(parse *p, sent s)
{
    if (p->ns == p->caps) {
        size_t nc = p->caps ? p->caps * 2 : 256;
        sent *n = exec_realloc(p->s, nc * sizeof *n);
        if (!n)
            return -1;
        p->s = n;
        p->caps = nc;
    }
    p->s[p->ns++] = s;
    return 0;
}

/* Lower-cases and splits [p, end) into tokens in place, dropping the
 * punctuation bAbI attaches to words (. ? ! ,). Returns the count or -1. */
static long tokenize(parse *ps, char *p, char *end)
{
    long n = 0;
    for (char *q = p; q < end; q++) {
        if (*q == '.' || *q == '?' || *q == '!' || *q == ',')
            *q = ' ';
        *q = (char)tolower((unsigned char)*q);
    }
    *end = '\0';
    char *q = p;
    for (;;) {
        while (*q && isspace((unsigned char)*q))
            q++;
        if (!*q)
            break;
        char *w = q;
        while (*q && !isspace((unsigned char)*q))
            q++;
        if (*q)
            *q++ = '\0';
        if (push_tok(ps, w))
            return -1;
        n++;
    }
    return n;
}

static char *trim(char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    char *e = p + strlen(p);
    while (e > p && isspace((unsigned char)e[-1]))
        *--e = '\0';
    for (char *q = p; *q; q++)
        *q = (char)tolower((unsigned char)*q);
    return p;
}

void model_babi_destroy(model_babi_set *s)
{
    if (!s)
        return;
    if (s->words)
        for (int i = 0; i < s->vocab; i++)
            exec_free(s->words[i]);
    exec_free(s->words);
    exec_free(s->sents);
    exec_free(s->recent);
    exec_free(s->count);
    exec_free(s->queries);
    exec_free(s->answers);
    exec_free(s);
}

int model_babi_word(const model_babi_set *s, const char *word)
{
    int lo = 1, hi = s->vocab - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(s->words[mid], word);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Words by their text: open addressing on FNV-1a, at most half full. A
 * story file holds hundreds of thousands of tokens over a vocabulary of
 * tens to a few hundred words; sorting every token (and then a binary
 * search per token copied into each question's memory) was a fifth of a
 * small memnet run's 0.13-0.16 s. */
typedef struct wordmap {
    const char **key;
    int32_t *id;
    size_t cap, n;
} wordmap;

static uint64_t word_hash(const char *w)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *w; w++)
        h = (h ^ (unsigned char)*w) * 0x100000001b3ull;
    return h;
}

/* the slot of w: its own, or the empty one where it would go */
static size_t wordmap_slot(const wordmap *m, const char *w)
{
    size_t i = (size_t)word_hash(w) & (m->cap - 1);
    while (m->key[i] && strcmp(m->key[i], w) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void wordmap_free(wordmap *m)
{
    exec_free(m->key);
    exec_free(m->id);
    *m = (wordmap){ 0 };
}

/* w into m (id 0) if it is not there yet */
static exec_status wordmap_add(wordmap *m, const char *w)
{
    if (2 * (m->n + 1) > m->cap) {
        wordmap bigger = { .cap = m->cap ? 2 * m->cap : 256 };
        bigger.key = exec_calloc(bigger.cap, sizeof *bigger.key);
        bigger.id = exec_calloc(bigger.cap, sizeof *bigger.id);
        if (!bigger.key || !bigger.id) {
            wordmap_free(&bigger);
            return exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i]) {
                size_t j = wordmap_slot(&bigger, m->key[i]);
                bigger.key[j] = m->key[i], bigger.id[j] = m->id[i];
            }
        bigger.n = m->n;
        wordmap_free(m);
        *m = bigger;
    }
    size_t i = wordmap_slot(m, w);
    if (!m->key[i])
        m->key[i] = w, m->id[i] = 0, m->n++;
    return EXEC_OK;
}

exec_status model_babi_parse(const char *text, size_t len, const char *name, int mem, model_babi_set **out)
{
    *out = NULL;
    if (mem < 1)
        return exec_fail(EXEC_ERR_ARG, "bAbI: memory of %d sentences", mem);
    if (memchr(text, '\0', len))
        return exec_fail(EXEC_ERR_IO, "%s: not a text file (NUL byte)", name);
    char *buf = exec_malloc(len + 1);
    parse ps = { 0 };
    model_babi_set *set = NULL;
    const char **words = NULL;
    wordmap map = { 0 };
    int32_t *tok_id = NULL;
    exec_status st = EXEC_OK;
    if (!buf) {
        st = exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
        goto done;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';

    /* pass 1: lines -> sentences of tokens */
    long line = 0, prev_id = 0;
    size_t story = 0, nq = 0;
    int max_words = 1;
    for (char *p = buf; p < buf + len;) {
        line++;
        char *eol = memchr(p, '\n', (size_t)(buf + len - p));
        if (!eol)
            eol = buf + len;
        *eol = '\0';
        char *next = eol + 1;
        if (eol - p > BABI_MAX_LINE) {
            st = exec_fail(EXEC_ERR_IO, "%s:%ld: line longer than %d bytes", name, line, BABI_MAX_LINE);
            goto done;
        }
        char *q = p;
        while (*q && isspace((unsigned char)*q))
            q++;
        if (!*q) { /* blank line */
            p = next;
            continue;
        }
        if (!isdigit((unsigned char)*q)) {
            st = exec_fail(EXEC_ERR_IO, "%s:%ld: expected a sentence number, got '%.20s'", name, line, q);
            goto done;
        }
        long id = 0;
        while (isdigit((unsigned char)*q)) {
            id = id * 10 + (*q - '0');
            if (id > 1000000) {
                st = exec_fail(EXEC_ERR_IO, "%s:%ld: sentence number too large", name, line);
                goto done;
            }
            q++;
        }
        if (*q != ' ' && *q != '\t') {
            st = exec_fail(EXEC_ERR_IO, "%s:%ld: expected a space after the sentence number", name, line);
            goto done;
        }
        if (id == 1) {
            story++;
        } else if (id != prev_id + 1) {
            st = exec_fail(EXEC_ERR_IO, "%s:%ld: sentence number %ld follows %ld", name, line, id, prev_id);
            goto done;
        }
        prev_id = id;
        char *tab = strchr(q, '\t');
        const char *answer = NULL;
        char *end = tab ? tab : eol;
        if (tab) { /* a question: text \t answer [\t supporting facts] */
            char *a = tab + 1, *tab2 = strchr(a, '\t');
            if (tab2)
                *tab2 = '\0';
            answer = trim(a);
            if (!*answer) {
                st = exec_fail(EXEC_ERR_IO, "%s:%ld: question without an answer", name, line);
                goto done;
            }
            nq++;
        }
        size_t first = ps.ntok;
        long nw = tokenize(&ps, q, end);
        if (nw < 0) {
            st = exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
            goto done;
        }
        if (nw == 0) {
            st = exec_fail(EXEC_ERR_IO, "%s:%ld: empty sentence", name, line);
            goto done;
        }
        if (nw > BABI_MAX_WORDS) {
            st = exec_fail(EXEC_ERR_IO, "%s:%ld: %ld words (at most %d)", name, line, nw, BABI_MAX_WORDS);
            goto done;
        }
        if (nw > max_words)
            max_words = (int)nw;
        if (push_sent(&ps, (sent){ first, (size_t)nw, answer, story, line })) {
            st = exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
            goto done;
        }
        p = next;
    }
    if (nq == 0) {
        st = exec_fail(EXEC_ERR_IO, "%s: no questions (not bAbI text?)", name);
        goto done;
    }
    if (nq > (1u << 24)) {
        st = exec_fail(EXEC_ERR_IO, "%s: too many questions", name);
        goto done;
    }

    /* the vocabulary: every token and answer once, sorted; 0 is nil */
    for (size_t i = 0; i < ps.ntok + ps.ns; i++) {
        const char *w = i < ps.ntok ? ps.tok[i] : ps.s[i - ps.ntok].answer;
        if (w && (st = wordmap_add(&map, w)))
            goto done;
    }
    const size_t nu = map.n; /* at least one: every question has an answer */
    words = exec_malloc(nu * sizeof *words);
    if (!words) {
        st = exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
        goto done;
    }
    for (size_t i = 0, k = 0; i < map.cap; i++)
        if (map.key[i])
            words[k++] = map.key[i];
    qsort(words, nu, sizeof *words, cmp_str);
    for (size_t i = 0; i < nu; i++)
        map.id[wordmap_slot(&map, words[i])] = (int32_t)i + 1;
    tok_id = exec_malloc((ps.ntok ? ps.ntok : 1) * sizeof *tok_id);
    if (!tok_id) {
        st = exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
        goto done;
    }
    for (size_t i = 0; i < ps.ntok; i++)
        tok_id[i] = map.id[wordmap_slot(&map, ps.tok[i])];

    set = exec_calloc(1, sizeof *set);
    if (!set) {
        st = exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
        goto done;
    }
    set->n = (int)nq;
    set->mem = mem;
    set->sent_len = max_words;
    set->vocab = (int)nu + 1;
    set->nsent = (int)(ps.ns - nq);
    set->words = exec_calloc((size_t)set->vocab, sizeof *set->words);
    set->sents = exec_calloc((size_t)(set->nsent ? set->nsent : 1) * max_words, sizeof *set->sents);
    set->recent = exec_calloc(nq, sizeof *set->recent);
    set->count = exec_calloc(nq, sizeof *set->count);
    set->queries = exec_calloc((size_t)nq * max_words, sizeof *set->queries);
    set->answers = exec_calloc(nq, sizeof *set->answers);
    if (!set->words || !set->sents || !set->recent || !set->count || !set->queries || !set->answers) {
        st = exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
        goto done;
    }
    set->words[0] = exec_strdup("<nil>");
    for (size_t i = 0; i < nu; i++)
        set->words[i + 1] = exec_strdup(words[i]);
    for (int i = 0; i < set->vocab; i++)
        if (!set->words[i]) {
            st = exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
            goto done;
        }

    /* pass 2: the statements once each; each question with where its
     * story's statements before it end and how many of them its memory holds */
    size_t qi = 0, si = 0, story_first = 0, cur_story = 0;
    for (size_t i = 0; i < ps.ns; i++) {
        const sent *s = &ps.s[i];
        if (s->story != cur_story)
            cur_story = s->story, story_first = si;
        int32_t *dst = s->answer ? set->queries + qi * (size_t)max_words : set->sents + si * (size_t)max_words;
        for (size_t t = 0; t < s->count; t++)
            dst[t] = tok_id[s->first + t];
        if (!s->answer) {
            si++;
            continue;
        }
        set->answers[qi] = map.id[wordmap_slot(&map, s->answer)];
        const size_t before = si - story_first;
        set->recent[qi] = (int32_t)si - 1;
        set->count[qi] = (int32_t)(before < (size_t)mem ? before : (size_t)mem);
        qi++;
    }
    *out = set;
    set = NULL;
done:
    model_babi_destroy(set);
    wordmap_free(&map);
    exec_free(tok_id);
    exec_free(words);
    exec_free(ps.tok);
    exec_free(ps.s);
    exec_free(buf);
    return st;
}

void model_babi_memory(const model_babi_set *s, int q, int32_t *out)
{
    const size_t J = (size_t)s->sent_len;
    const int c = s->count[q];
    for (int slot = 0; slot < c; slot++)
        memcpy(out + slot * J, s->sents + (size_t)(s->recent[q] - slot) * J, J * sizeof *out);
    memset(out + c * J, 0, (size_t)(s->mem - c) * J * sizeof *out);
}

exec_status model_babi_load(const char *path, int mem, model_babi_set **out)
{
    *out = NULL;
    char *buf;
    size_t len;
    exec_status st = model_seq_read_file(path, (size_t)256 << 20, &buf, &len);
    if (st)
        return st;
    if (len == 0) {
        exec_free(buf);
        return exec_fail(EXEC_ERR_IO, "%s: empty file", path);
    }
    st = model_babi_parse(buf, len, path, mem, out);
    exec_free(buf);
    return st;
}

/* ---- the task-1 generator ----------------------------------------------- */
static const char *const people[] = { "Mary", "John", "Sandra", "Daniel" };
static const char *const places[] = { "bathroom", "hallway", "garden", "office", "bedroom", "kitchen" };
static const char *const verbs[] = { "moved to", "went to", "journeyed to", "travelled to", "went back to" };
#define NPEOPLE 4
#define NPLACES 6
#define NVERBS 5

char *model_babi_generate_text(int nstories, uint64_t seed, size_t *len)
{
    *len = 0;
    if (nstories < 1)
        return NULL;
    size_t cap = (size_t)nstories * 15 * 64 + 64, n = 0;
    char *b = exec_malloc(cap);
    if (!b)
        return NULL;
    exec_rng r = exec_rng_make(seed ^ 0xbab1ull);
    for (int s = 0; s < nstories; s++) {
        int where[NPEOPLE], last[NPEOPLE], line = 1;
        for (int p = 0; p < NPEOPLE; p++)
            where[p] = last[p] = -1;
        /* as task 1: five rounds of two statements and one question */
        for (int round = 0; round < 5; round++) {
            for (int k = 0; k < 2; k++) {
                int p = (int)exec_rng_below(&r, NPEOPLE), l = (int)exec_rng_below(&r, NPLACES);
                where[p] = l;
                last[p] = line;
                n += (size_t)snprintf(b + n, cap - n, "%d %s %s the %s.\n", line++, people[p],
                                      verbs[exec_rng_below(&r, NVERBS)], places[l]);
            }
            int cand[NPEOPLE], nc = 0;
            for (int p = 0; p < NPEOPLE; p++)
                if (where[p] >= 0)
                    cand[nc++] = p;
            int p = cand[exec_rng_below(&r, (uint32_t)nc)];
            /* the supporting fact: the line where p last moved */
            n += (size_t)snprintf(b + n, cap - n, "%d Where is %s? \t%s\t%d\n", line, people[p], places[where[p]],
                                  last[p]);
            line++;
        }
    }
    *len = n;
    return b;
}

exec_status model_babi_generate(int nstories, uint64_t seed, int mem, model_babi_set **out)
{
    *out = NULL;
    size_t len;
    char *text = model_babi_generate_text(nstories, seed, &len);
    if (!text)
        return exec_fail(EXEC_ERR_NOMEM, "bAbI: cannot generate %d stories", nstories);
    exec_status st = model_babi_parse(text, len, "bAbI generator", mem, out);
    exec_free(text);
    return st;
}
