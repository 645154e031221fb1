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
#include "base/table.h"
#include "exec/rng.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BABI_MAX_WORDS 64 /* per sentence */
#define BABI_MAX_LINE 4096

/* Words by their text (a base/table.h table), each with the number of its
 * first appearance. A story file holds hundreds of thousands of tokens over
 * a vocabulary of tens to a few hundred words: one lookup per token, the
 * vocabulary then sorted alone and the tokens' numbers mapped to its ids
 * (sorting every token, then a binary search per token, was a fifth of a
 * small memnet run's 0.13-0.16 s; two lookups per token, 5.6-7.3 ms of a
 * small preset's 2000 stories). */
typedef struct wordmap {
    base_table first;  /* struct wordnum by the word's bytes */
    const char **word; /* [n]: the words by that number */
    size_t n, capword;
} wordmap;

struct wordnum {
    base_table_bytes key;
    int32_t first; /* its number, in the order of first appearance */
};

static void wordmap_free(wordmap *m)
{
    base_table_free(&m->first);
    base_free(m->word);
    *m = (wordmap){ 0 };
}

/* w's number in m (len bytes, NUL-terminated; kept, not copied), a new one
 * where it is not there yet: >= 0, or -1 when out of memory */
static int32_t wordmap_intern(wordmap *m, const char *w, size_t len)
{
    if (!m->first.size)
        m->first = BASE_TABLE(struct wordnum, 0);
    struct wordnum *e;
    base_table_status st = base_table_put(&m->first, &(base_table_bytes){ w, len }, (void **)&e);
    if (st == BASE_TABLE_FOUND)
        return e->first;
    if (st == BASE_TABLE_NOMEM || base_grow(&m->word, &m->capword, m->n + 1, sizeof *m->word)) {
        if (st == BASE_TABLE_ADDED)
            base_table_del(&m->first, e);
        return -1;
    }
    e->first = (int32_t)m->n, m->word[m->n] = w;
    return (int32_t)m->n++;
}

typedef struct sent {
    size_t first, count; /* tokens */
    int32_t answer;      /* its word's number (wordmap); -1 for a statement */
    size_t story;
} sent;

typedef struct parse {
    int32_t *tok; /* the tokens' word numbers */
    size_t ntok, captok;
    sent *s;
    size_t ns, caps;
    wordmap map;
    /* pass 1's place in the file */
    const char *name; /* the file's, for messages */
    long line, prev_id;
    size_t story, nq; /* stories and questions so far */
    int max_words;    /* the longest sentence's words */
} parse;

static int push_tok(parse *p, int32_t t)
{
    if (base_grow(&p->tok, &p->captok, p->ntok + 1, sizeof *p->tok))
        return -1;
    p->tok[p->ntok++] = t;
    return 0;
}

static int push_sent(parse *p, sent s)
{
    if (base_grow(&p->s, &p->caps, p->ns + 1, sizeof *p->s))
        return -1;
    p->s[p->ns++] = s;
    return 0;
}

/* the C locale's isspace and tolower, without a call per byte */
static int is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* Lower-cases and splits [p, end) into words in place, dropping the
 * punctuation bAbI attaches to words (. ? ! ,), each word's number into
 * ps's tokens. Returns the count or -1 (out of memory). */
static long tokenize(parse *ps, char *p, char *end)
{
    long n = 0;
    char *q = p;
    while (q < end) {
        while (q < end && (is_space((unsigned char)*q) || *q == '.' || *q == '?' || *q == '!' || *q == ','))
            q++;
        if (q == end)
            break;
        char *w = q;
        for (; q < end && !is_space((unsigned char)*q) && *q != '.' && *q != '?' && *q != '!' && *q != ','; q++)
            *q = lower(*q);
        size_t len = (size_t)(q - w);
        if (q < end)
            q++;
        w[len] = '\0';
        int32_t id = wordmap_intern(&ps->map, w, len);
        if (id < 0 || push_tok(ps, id))
            return -1;
        n++;
    }
    return n;
}

static char *trim(char *p)
{
    while (*p && is_space((unsigned char)*p))
        p++;
    char *e = p + strlen(p);
    while (e > p && is_space((unsigned char)e[-1]))
        *--e = '\0';
    for (char *q = p; *q; q++)
        *q = lower(*q);
    return p;
}

void model_babi_destroy(model_babi_set *s)
{
    if (!s)
        return;
    if (s->words)
        for (int i = 0; i < s->vocab; i++)
            base_free(s->words[i]);
    base_free(s->words);
    base_free(s->sents);
    base_free(s->recent);
    base_free(s->count);
    base_free(s->queries);
    base_free(s->answers);
    base_free(s);
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

/* entries of wordmap.word by their text (sorted as pointers to them: their
 * place in it is the word's number) */
static int cmp_word(const void *a, const void *b)
{
    return strcmp(**(const char *const *const *)a, **(const char *const *const *)b);
}

/* Parses buf's len bytes in place (buf[len] is written: a NUL). */
/* One line of a story, q its first non-blank character and eol its end
 * (made '\0'): "ID text" or, for a question, "ID text \t answer [\t
 * supporting facts]". */
static exec_status parse_line(parse *ps, char *q, char *eol)
{
    const char *name = ps->name;
    const long line = ps->line;
    if (!isdigit((unsigned char)*q))
        return exec_fail(EXEC_ERR_IO, "%s:%ld: expected a sentence number, got '%.20s'", name, line, q);
    long id = 0;
    while (isdigit((unsigned char)*q)) {
        id = id * 10 + (*q - '0');
        if (id > 1000000)
            return exec_fail(EXEC_ERR_IO, "%s:%ld: sentence number too large", name, line);
        q++;
    }
    if (*q != ' ' && *q != '\t')
        return exec_fail(EXEC_ERR_IO, "%s:%ld: expected a space after the sentence number", name, line);
    if (id == 1)
        ps->story++;
    else if (id != ps->prev_id + 1)
        return exec_fail(EXEC_ERR_IO, "%s:%ld: sentence number %ld follows %ld", name, line, id, ps->prev_id);
    ps->prev_id = id;

    char *tab = memchr(q, '\t', (size_t)(eol - q));
    int32_t answer = -1;
    char *end = tab ? tab : eol;
    if (tab) { /* a question: text \t answer [\t supporting facts] */
        char *a = tab + 1, *tab2 = memchr(a, '\t', (size_t)(eol - a));
        if (tab2)
            *tab2 = '\0';
        const char *w = trim(a);
        if (!*w)
            return exec_fail(EXEC_ERR_IO, "%s:%ld: question without an answer", name, line);
        if ((answer = wordmap_intern(&ps->map, w, strlen(w))) < 0)
            return exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
        ps->nq++;
    }

    size_t first = ps->ntok;
    long nw = tokenize(ps, q, end);
    if (nw < 0)
        return exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
    if (nw == 0)
        return exec_fail(EXEC_ERR_IO, "%s:%ld: empty sentence", name, line);
    if (nw > BABI_MAX_WORDS)
        return exec_fail(EXEC_ERR_IO, "%s:%ld: %ld words (at most %d)", name, line, nw, BABI_MAX_WORDS);
    if (nw > ps->max_words)
        ps->max_words = (int)nw;
    if (push_sent(ps, (sent){ first, (size_t)nw, answer, ps->story }))
        return exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
    return EXEC_OK;
}

/* Pass 1: the lines of buf (len bytes, buf[len] writable) into sentences
 * of word numbers. */
static exec_status parse_lines(parse *ps, char *buf, size_t len)
{
    for (char *p = buf; p < buf + len;) {
        ps->line++;
        char *eol = memchr(p, '\n', (size_t)(buf + len - p));
        if (!eol)
            eol = buf + len;
        *eol = '\0';
        char *next = eol + 1;
        if (eol - p > BABI_MAX_LINE)
            return exec_fail(EXEC_ERR_IO, "%s:%ld: line longer than %d bytes", ps->name, ps->line, BABI_MAX_LINE);
        char *q = p;
        while (*q && is_space((unsigned char)*q))
            q++;
        exec_status st = *q ? parse_line(ps, q, eol) : EXEC_OK; /* a blank line: nothing */
        if (st)
            return st;
        p = next;
    }
    if (ps->nq == 0)
        return exec_fail(EXEC_ERR_IO, "%s: no questions (not bAbI text?)", ps->name);
    if (ps->nq > (1u << 24))
        return exec_fail(EXEC_ERR_IO, "%s: too many questions", ps->name);
    return EXEC_OK;
}

/* The set's arrays for ps's sentences, and its words: <nil>, then the
 * nu words of by_word in order. */
static exec_status set_alloc(model_babi_set *set, const parse *ps, const char *const *const *by_word, size_t nu,
                             int mem)
{
    const size_t nq = ps->nq;
    const int max_words = ps->max_words;
    set->n = (int)nq;
    set->mem = mem;
    set->sent_len = max_words;
    set->vocab = (int)nu + 1;
    set->nsent = (int)(ps->ns - nq);
    set->words = base_calloc((size_t)set->vocab, sizeof *set->words);
    set->sents = base_calloc((size_t)(set->nsent ? set->nsent : 1) * max_words, sizeof *set->sents);
    set->recent = base_calloc(nq, sizeof *set->recent);
    set->count = base_calloc(nq, sizeof *set->count);
    set->queries = base_calloc((size_t)nq * max_words, sizeof *set->queries);
    set->answers = base_calloc(nq, sizeof *set->answers);
    if (!set->words || !set->sents || !set->recent || !set->count || !set->queries || !set->answers)
        return exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
    set->words[0] = base_strdup("<nil>");
    for (size_t i = 0; i < nu; i++)
        set->words[i + 1] = base_strdup(*by_word[i]);
    for (int i = 0; i < set->vocab; i++)
        if (!set->words[i])
            return exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
    return EXEC_OK;
}

/* Pass 2: the statements once each; each question with where its story's
 * statements before it end and how many of them its memory holds. */
static void set_fill(model_babi_set *set, const parse *ps, const int32_t *id_of, int mem)
{
    const int max_words = ps->max_words;
    size_t qi = 0, si = 0, story_first = 0, cur_story = 0;
    for (size_t i = 0; i < ps->ns; i++) {
        const sent *s = &ps->s[i];
        if (s->story != cur_story)
            cur_story = s->story, story_first = si;
        int32_t *dst = s->answer >= 0 ? set->queries + qi * (size_t)max_words : set->sents + si * (size_t)max_words;
        for (size_t t = 0; t < s->count; t++)
            dst[t] = id_of[ps->tok[s->first + t]];
        if (s->answer < 0) {
            si++;
            continue;
        }
        set->answers[qi] = id_of[s->answer];
        const size_t before = si - story_first;
        set->recent[qi] = (int32_t)si - 1;
        set->count[qi] = (int32_t)(before < (size_t)mem ? before : (size_t)mem);
        qi++;
    }
}

static exec_status parse_in_place(char *buf, size_t len, const char *name, int mem, model_babi_set **out)
{
    *out = NULL;
    if (mem < 1)
        return exec_fail(EXEC_ERR_ARG, "bAbI: memory of %d sentences", mem);
    if (memchr(buf, '\0', len))
        return exec_fail(EXEC_ERR_IO, "%s: not a text file (NUL byte)", name);
    buf[len] = '\0';
    parse ps = { .name = name, .max_words = 1 };
    model_babi_set *set = NULL;
    const char *const **by_word = NULL;
    int32_t *id_of = NULL;
    exec_status st = parse_lines(&ps, buf, len);
    if (st)
        goto done;

    /* the vocabulary: every token and answer once, sorted; 0 is nil; each
     * word number's id */
    const size_t nu = ps.map.n; /* at least one: every question has an answer */
    by_word = base_malloc(nu * sizeof *by_word);
    id_of = base_malloc(nu * sizeof *id_of);
    if (!by_word || !id_of) {
        st = exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
        goto done;
    }
    for (size_t i = 0; i < nu; i++)
        by_word[i] = &ps.map.word[i];
    qsort(by_word, nu, sizeof *by_word, cmp_word);
    for (size_t i = 0; i < nu; i++)
        id_of[by_word[i] - ps.map.word] = (int32_t)i + 1;

    set = base_calloc(1, sizeof *set);
    if (!set) {
        st = exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
        goto done;
    }
    if ((st = set_alloc(set, &ps, by_word, nu, mem)))
        goto done;
    set_fill(set, &ps, id_of, mem);
    *out = set;
    set = NULL;
done:
    model_babi_destroy(set);
    wordmap_free(&ps.map);
    base_free(id_of);
    base_free(by_word);
    base_free(ps.tok);
    base_free(ps.s);
    return st;
}

exec_status model_babi_parse(const char *text, size_t len, const char *name, int mem, model_babi_set **out)
{
    *out = NULL;
    char *buf = base_malloc(len + 1);
    if (!buf)
        return exec_fail(EXEC_ERR_NOMEM, "bAbI: out of memory");
    memcpy(buf, text, len);
    exec_status st = parse_in_place(buf, len, name, mem, out);
    base_free(buf);
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
        base_free(buf);
        return exec_fail(EXEC_ERR_IO, "%s: empty file", path);
    }
    st = parse_in_place(buf, len, path, mem, out); /* model_seq_read_file leaves a byte past len */
    base_free(buf);
    return st;
}

/* ---- the task-1 generator ----------------------------------------------- */
static const char *const people[] = { "Mary", "John", "Sandra", "Daniel" };
static const char *const places[] = { "bathroom", "hallway", "garden", "office", "bedroom", "kitchen" };
static const char *const verbs[] = { "moved to", "went to", "journeyed to", "travelled to", "went back to" };
#define NPEOPLE 4
#define NPLACES 6
#define NVERBS 5

/* appends to a generated story's text (its buffer large enough: 64 bytes a line) */
static char *put_str(char *o, const char *str)
{
    size_t n = strlen(str);
    memcpy(o, str, n);
    return o + n;
}

static char *put_int(char *o, int v) /* v >= 0 */
{
    char d[12];
    int n = 0;
    do
        d[n++] = (char)('0' + v % 10), v /= 10;
    while (v);
    while (n)
        *o++ = d[--n];
    return o;
}

/* The text as the bAbI files have it, written piece by piece (snprintf's
 * format parsing was half of a small preset's 2.7-5.8 ms) */
char *model_babi_generate_text(int nstories, uint64_t seed, size_t *len)
{
    *len = 0;
    if (nstories < 1)
        return NULL;
    size_t cap = (size_t)nstories * 15 * 64 + 64;
    char *b = base_malloc(cap), *o = b;
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
                /* "%d %s %s the %s.\n" */
                o = put_int(o, line++), *o++ = ' ', o = put_str(o, people[p]), *o++ = ' ';
                o = put_str(o, verbs[exec_rng_below(&r, NVERBS)]), o = put_str(o, " the "), o = put_str(o, places[l]);
                o = put_str(o, ".\n");
            }
            int cand[NPEOPLE], nc = 0;
            for (int p = 0; p < NPEOPLE; p++)
                if (where[p] >= 0)
                    cand[nc++] = p;
            int p = cand[exec_rng_below(&r, (uint32_t)nc)];
            /* the supporting fact: the line where p last moved ("%d Where is %s? \t%s\t%d\n") */
            o = put_int(o, line), o = put_str(o, " Where is "), o = put_str(o, people[p]), o = put_str(o, "? \t");
            o = put_str(o, places[where[p]]), *o++ = '\t', o = put_int(o, last[p]), *o++ = '\n';
            line++;
        }
    }
    *len = (size_t)(o - b);
    return b;
}

exec_status model_babi_generate(int nstories, uint64_t seed, int mem, model_babi_set **out)
{
    *out = NULL;
    size_t len;
    char *text = model_babi_generate_text(nstories, seed, &len);
    if (!text)
        return exec_fail(EXEC_ERR_NOMEM, "bAbI: cannot generate %d stories", nstories);
    exec_status st = parse_in_place(text, len, "bAbI generator", mem, out); /* the text leaves room past len */
    base_free(text);
    return st;
}
