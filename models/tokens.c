/* tokens.c -- the Transformer's data: the copy / reversal task and a loader
 * for tokenized parallel text (token ids, one sentence pair per line). */
#include "models/seqdata.h"

#include "base/alloc.h"
#include "exec/rng.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

exec_status model_tokens_copy_task(int n, int len, int vocab, bool reverse, uint64_t seed, model_text_corpus **out)
{
    *out = NULL;
    if (n <= 0 || len < 3 || vocab < MODEL_TEXT_FIRST + 2)
        return exec_fail(EXEC_ERR_ARG, "tokens: bad copy task (n %d, length %d, vocab %d)", n, len, vocab);
    model_text_corpus *c;
    exec_status s = model_text_corpus_new(n, len, len, vocab, vocab, &c);
    if (s)
        return s;
    exec_rng r = exec_rng_make(seed ^ 0xc09eull);
    const int lo = len / 2 > 1 ? len / 2 : 1, hi = len - 1;
    for (int i = 0; i < n; i++) {
        int k = lo + (int)exec_rng_below(&r, (uint32_t)(hi - lo + 1));
        int32_t *sp = c->src + (size_t)i * len, *tp = c->tgt + (size_t)i * len;
        for (int t = 0; t < k; t++)
            sp[t] = MODEL_TEXT_FIRST + (int32_t)exec_rng_below(&r, (uint32_t)(vocab - MODEL_TEXT_FIRST));
        for (int t = 0; t < k; t++)
            tp[t] = sp[reverse ? k - 1 - t : t];
        sp[k] = tp[k] = MODEL_TEXT_EOS;
    }
    *out = c;
    return EXEC_OK;
}

/* Parses the ids of one side, p up to end, into ids (at most max of them,
 * counting on); returns the count, or -1 with *bad at the offending text. */
static long parse_ids(const char *p, const char *end, int vocab, int32_t *ids, long max, const char **bad)
{
    long n = 0;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\r'))
            p++;
        if (p == end)
            break;
        const char *tok = p;
        if (*p < '0' || *p > '9') {
            *bad = tok;
            return -1;
        }
        long long v = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            v = v * 10 + (*p - '0');
            if (v > INT_MAX) {
                *bad = tok;
                return -1;
            }
            p++;
        }
        if (p < end && *p != ' ' && *p != '\r') {
            *bad = tok;
            return -1;
        }
        if (n < max)
            ids[n] = v < vocab - MODEL_TEXT_FIRST ? (int32_t)v + MODEL_TEXT_FIRST : MODEL_TEXT_UNK;
        n++;
    }
    return n;
}

exec_status model_tokens_load(const char *path, int src_len, int tgt_len, int vocab, model_text_corpus **out)
{
    *out = NULL;
    if (src_len < 2 || tgt_len < 2 || vocab <= MODEL_TEXT_FIRST)
        return exec_fail(EXEC_ERR_ARG, "tokens: bad sizes (source %d, target %d, vocab %d)", src_len, tgt_len, vocab);
    char *buf = NULL;
    size_t len = 0;
    model_text_corpus *c = NULL;
    exec_status st = model_seq_read_file(path, (size_t)1 << 31, &buf, &len);
    if (st)
        return st;
    if (memchr(buf, '\0', len)) {
        st = exec_fail(EXEC_ERR_IO, "%s: not a text file (a NUL byte)", path);
        goto end;
    }
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    if (lines > INT_MAX) {
        st = exec_fail(EXEC_ERR_IO, "%s: too many lines", path);
        goto end;
    }
    if ((st = model_text_corpus_new((int)lines, src_len, tgt_len, vocab, vocab, &c)))
        goto end;
    int kept = 0;
    size_t lineno = 0;
    for (char *p = buf; p < buf + len;) {
        char *eol = memchr(p, '\n', (size_t)(buf + len - p));
        if (!eol)
            eol = buf + len;
        lineno++;
        const char *q = p;
        while (q < eol && (*q == ' ' || *q == '\r'))
            q++;
        if (q == eol) { /* blank */
            p = eol + 1;
            continue;
        }
        /* the separator: " ||| " (Moses-style) or a tab */
        char *sep = memchr(p, '\t', (size_t)(eol - p));
        size_t seplen = 1;
        if (!sep) {
            for (char *s = p; s + 3 <= eol; s++)
                if (s[0] == '|' && s[1] == '|' && s[2] == '|') {
                    sep = s;
                    seplen = 3;
                    break;
                }
        }
        if (!sep) {
            st = exec_fail(EXEC_ERR_IO, "%s:%zu: no ' ||| ' or tab between source and target ids", path, lineno);
            goto end;
        }
        int32_t *sp = c->src + (size_t)kept * src_len, *tp = c->tgt + (size_t)kept * tgt_len;
        const char *bad = NULL;
        long ns = parse_ids(p, sep, vocab, sp, src_len - 1, &bad);
        long nt = ns < 0 ? 0 : parse_ids(sep + seplen, eol, vocab, tp, tgt_len - 1, &bad);
        if (ns < 0 || nt < 0) {
            size_t w = strcspn(bad, " \t\r\n");
            st = exec_fail(EXEC_ERR_IO, "%s:%zu: '%.*s' is not a token id (decimal integers >= 0 below 2^31)", path,
                           lineno, (int)(w ? (w > 40 ? 40 : w) : 1), bad);
            goto end;
        }
        if (ns == 0 || nt == 0) {
            st = exec_fail(EXEC_ERR_IO, "%s:%zu: the %s side has no token ids", path, lineno,
                           ns == 0 ? "source" : "target");
            goto end;
        }
        if (ns <= src_len - 1 && nt <= tgt_len - 1) {
            sp[ns] = MODEL_TEXT_EOS;
            tp[nt] = MODEL_TEXT_EOS;
            kept++;
        } else { /* too long: leave the slot's PAD for the next pair */
            memset(sp, 0, (size_t)src_len * sizeof *sp);
            memset(tp, 0, (size_t)tgt_len * sizeof *tp);
        }
        p = eol + 1;
    }
    if (!kept) {
        st = exec_fail(EXEC_ERR_IO, "%s: no sentence pair fits %d source and %d target tokens", path, src_len - 1,
                       tgt_len - 1);
        goto end;
    }
    c->n = kept;
end:
    base_free(buf);
    if (st) {
        model_text_destroy(c);
        return st;
    }
    *out = c;
    return EXEC_OK;
}
