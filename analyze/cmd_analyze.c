/* cmd_analyze.c -- `fathom analyze breakdown|compare|similarity|scaling|roofline|
 * memory TRACE...`, `fathom analyze diff A B` and `fathom report TRACE...`.
 * Reads every trace (archive, CTF directory or net:// URL) into a profile,
 * prints the warnings each one earned on stderr, then the analysis (or,
 * for report, the charts and the HTML page). */
#include "analyze/analyze_cmds.h"

#include "analyze/analysis.h"
#include "analyze/html.h"
#include "analyze/profile.h"
#include "analyze/read_trace.h"
#include "analyze/roofline.h"
#include "base/alloc.h"
#include "tracer/output.h"
#include "tracer/live.h"
#include "tracer/reader.h"

#include <math.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "analyze" or "report": the command every message names (base/cli.h) */
static const char *cmd = "analyze";

static void usage(FILE *f)
{
    int w = 10; /* the names' column: the longest name */
    for (size_t i = 0; i < analyze_nanalyses; i++)
        if ((int)strlen(analyze_analyses[i]->name) > w)
            w = (int)strlen(analyze_analyses[i]->name);
    for (size_t i = 0; i < analyze_nanalyses; i++)
        fprintf(f, "%s fathom analyze %-*s %s\n", i ? "      " : "usage:", w, analyze_analyses[i]->name,
                analyze_analyses[i]->args);
    fprintf(f, "\n"
               "Analyzes recorded traces offline: TRACE is a trace archive (.tar.zst), a folder\n"
               "of archives alone (each one a TRACE), a CTF directory, or a\n"
               "net://HOST/host/HOSTNAME/SESSION lttng-live URL.\n"
               "\n");
    for (size_t i = 0; i < analyze_nanalyses; i++) { /* each summary line under the first indented */
        const char *line = analyze_analyses[i]->summary;
        fprintf(f, "  %-*s  ", w, analyze_analyses[i]->name);
        for (const char *nl; (nl = strchr(line, '\n')); line = nl + 1)
            fprintf(f, "%.*s\n%*s", (int)(nl - line), line, w + 4, "");
        fprintf(f, "%s\n", line);
    }
    fprintf(f, "\n"
               "options:\n"
               "  --format text|csv|json  output format (default text)\n"
               "  --skip-first N          drop the first N steps (warm-up); all but memory, which\n"
               "                          follows the whole run\n"
               "  --skip-last N           drop the last N steps (all but memory)\n"
               "  --top N                 breakdown, diff, scaling, roofline: show only the first N\n"
               "                          op types (text)\n"
               "  --by type|class         similarity: vectors of op types (default) or classes\n"
               "  --pairs                 compare: the traces are TRAIN INFER [TRAIN INFER...]\n"
               "  --peak FILE             roofline: the ceilings, from `fathom peak --format json`\n"
               "  --gflops X, --gbs Y     roofline: the compute and memory ceilings (override --peak)\n"
               "  --strict                warnings (lost events, unmatched pairs...) are errors\n"
               "  --interval S            breakdown, memory of one net:// live session: the table so far\n"
               "                          every S seconds (default 2; redrawn on a terminal), then the\n"
               "                          final one when the session ends\n"
               "  --all                   with net://HOST[:PORT] (a relay): every live session it holds,\n"
               "                          side by side (a row each every interval, then the analysis)\n"
               "\n`fathom analyze NAME net://HOST[:PORT]` lists a relay's live sessions (host, session,\n"
               "model, mode, start); `fathom analyze --list net://HOST[:PORT]` its sessions' URLs.\n"
               "See fathom-analyze(1).\n");
}

/* One analysis's own help (`fathom analyze NAME --help`): its synopsis,
 * what it answers, and the options it takes. */
static void usage_of(const analyze_analysis *an, FILE *f)
{
    fprintf(f,
            "usage: fathom analyze %s %s\n\n%s\nTRACE is a trace archive (.tar.zst), a folder of archives alone\n"
            "(each one a TRACE), a CTF directory, or a net://HOST/host/HOSTNAME/SESSION\n"
            "lttng-live URL.\n\noptions:\n%s"
            "  --format text|csv|json  output format (default text)\n"
            "%s"
            "  --strict                warnings (lost events, unmatched pairs...) are errors\n"
            "  --interval S            of one net:// live session (breakdown, memory): the table so\n"
            "                          far every S seconds (default 2), then the final one\n"
            "\nAll analyses: 'fathom analyze --help'; see fathom-analyze(1).\n",
            an->name, an->args, an->about, an->options,
            (an->takes & ANALYZE_TAKES_WINDOW) ? "  --skip-first N          drop the first N steps (warm-up)\n"
                                                 "  --skip-last N           drop the last N steps\n"
                                               : "");
}

static void usage_report(FILE *f)
{
    fprintf(f, "usage: fathom report [options] [-o DIR] TRACE...\n"
               "\n"
               "Writes every analysis of the traces as charts and one HTML page into DIR (default\n"
               "'report'; it must not exist or be empty): DIR/index.html with the op time by\n"
               "class and by op type, training vs inference, the similarity matrix and\n"
               "dendrogram, the data flow's average parallelism, the roofline (with ceilings),\n"
               "the ranks of a distributed job side by side and the tensor memory by role.\n"
               "\n"
               "options:\n"
               "  -o, --output DIR        the folder to create (default report)\n"
               "  --format svg|png        the charts' format (default svg)\n"
               "  --top N                 op types in the heat map, the roofline and the tables (default 12;\n"
               "                          0: all)\n"
               "  --peak FILE             the recording machine's ceilings for the roofline, from\n"
               "                          `fathom peak --format json`; or --gflops X --gbs Y\n"
               "  --skip-first N, --skip-last N   drop warm-up and last steps\n"
               "  --strict                warnings (lost events, unmatched pairs...) are errors\n"
               "\nSee fathom-report(1).\n");
}

/* A number in [lo, hi] (the table of its bounds: the callers). */
static int parse_number(const char *opt, const char *arg, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = arg ? strtod(arg, &end) : 0;
    if (!arg || isspace((unsigned char)arg[0]) || errno || !end || *end || end == arg || !isfinite(v) || v < lo ||
        v > hi)
        return cli_usage_error(cmd, "%s wants a number in [%g, %g], not '%s'", opt, lo, hi, arg ? arg : "");
    *out = v;
    return 0;
}

static int parse_u32(const char *opt, const char *arg, uint32_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = arg ? strtoul(arg, &end, 10) : 0;
    if (!arg || !isdigit((unsigned char)arg[0]) || errno || !end || *end || end == arg || v > 1000000000ul)
        return cli_usage_error(cmd, "%s wants a non-negative integer, not '%s'", opt, arg ? arg : "");
    *out = (uint32_t)v;
    return 0;
}

/* The traces are not of one model and mode (message w): a warning, and
 * with --strict the end (returns 1). */
static int gives_up(int mismatch, const char *w, int strict)
{
    if (!mismatch)
        return 0;
    cli_error(cmd, "warning: %s", w);
    if (strict)
        cli_error(cmd, "--strict: giving up on the warning above");
    return strict;
}

/* The URLs of the live sessions a relay holds (kept for the process's
 * life: they become traces); 0, or 1 with the one-line error. */
typedef struct url_list {
    char **v;
    size_t n;
    const char **host, **name;
} url_list;

static int collect_url(void *ctx, const tracer_live_session *s)
{
    url_list *l = ctx;
    char **v = base_realloc(l->v, (l->n + 1) * sizeof *v);
    const char **h = base_realloc(l->host, (l->n + 1) * sizeof *h);
    if (v)
        l->v = v;
    if (h)
        l->host = h;
    const char **nm = base_realloc(l->name, (l->n + 1) * sizeof *nm);
    if (nm)
        l->name = nm;
    if (!v || !h || !nm || !(v[l->n] = base_strdup(s->url)))
        return -1;
    h[l->n] = base_strdup(s->host);
    nm[l->n] = base_strdup(s->name);
    l->n++;
    return 0;
}

/* Frees the list; keep_urls: its URL strings live on (they became traces). */
static void url_list_free(url_list *l, int keep_urls)
{
    for (size_t i = 0; i < l->n; i++) {
        if (!keep_urls)
            base_free(l->v[i]);
        base_free((void *)l->host[i]);
        base_free((void *)l->name[i]);
    }
    base_free(l->v);
    base_free(l->host);
    base_free(l->name);
    memset(l, 0, sizeof *l);
}

/* The relay's live sessions into l.  0; 1 after an error; -1 when it
 * holds none (said).  l is freed but for 0. */
static int relay_sessions(const char *relay, url_list *l)
{
    memset(l, 0, sizeof *l);
    if (tracer_live_sessions(relay, collect_url, l) != TRACER_OK) {
        cli_error(cmd, "%s", base_errmsg());
        url_list_free(l, 0);
        return 1;
    }
    if (!l->n) {
        cli_error(cmd, "%s holds no live session", relay);
        url_list_free(l, 0);
        return -1;
    }
    return 0;
}

static int relay_urls(const char *relay, const char ***out, size_t *n)
{
    url_list l;
    if (relay_sessions(relay, &l))
        return 1;
    *out = (const char **)l.v; /* the array and its strings are the caller's */
    *n = l.n;
    l.v = NULL;
    url_list_free(&l, 1);
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* A folder that holds archives and nothing else (as `fathom import --dir`
 * and `fathom record` fill one): its archives' paths in name order into
 * *out (the array and its strings the caller's), *n of them; *n 0 for
 * anything else (a CTF directory, a file).  0, or -1 out of memory. */
static int archives_in(const char *dir, const char ***out, size_t *n)
{
    struct stat sb;
    DIR *d = stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) ? opendir(dir) : NULL;
    char **v = NULL;
    size_t nv = 0, cap = 0;
    int rc = 0, others = 0;
    *out = NULL, *n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.')
            continue;
        if (len <= 8 || strcmp(e->d_name + len - 8, ".tar.zst") != 0) {
            others = 1;
            break;
        }
        char *path = NULL;
        if (base_grow((void **)&v, &cap, nv + 1, sizeof *v) || !(path = base_malloc(strlen(dir) + len + 2))) {
            rc = -1;
            break;
        }
        size_t dl = strlen(dir);
        while (dl > 1 && dir[dl - 1] == '/') /* job/ as job */
            dl--;
        sprintf(path, "%.*s/%s", (int)dl, dir, e->d_name);
        v[nv++] = path;
    }
    if (d)
        closedir(d);
    if (rc || others || !nv) {
        for (size_t i = 0; i < nv; i++)
            base_free(v[i]);
        base_free(v);
        return rc;
    }
    qsort(v, nv, sizeof *v, by_name);
    *out = (const char **)v, *n = nv;
    return 0;
}

/* fathom analyze NAME net://HOST[:PORT]: the relay's live sessions, each
 * with its host, name, model, mode and start (a name fathom record made
 * says when; the model and mode from each session, read for a moment). */
static int list_described(const char *relay)
{
    url_list l;
    int rc = relay_sessions(relay, &l);
    if (rc)
        return rc > 0; /* none: said, and no error */
    rc = 1;
    char **model = base_calloc(l.n, sizeof *model), **mode = base_calloc(l.n, sizeof *mode);
    if (!model || !mode || analyze_live_describe((const char *const *)l.v, l.n, 3.0, model, mode) != ANALYZE_OK) {
        cli_error(cmd, "%s", model && mode ? base_errmsg() : "out of memory");
        goto end;
    }
    printf("%-16s %-40s %-12s %-6s %-24s %s\n", "host", "session", "model", "mode", "started", "url");
    for (size_t i = 0; i < l.n; i++) {
        char when[64] = "?";
        tracer_live_default_name(l.name[i] ? l.name[i] : "", when, sizeof when);
        printf("%-16s %-40s %-12s %-6s %-24s %s\n", l.host[i] ? l.host[i] : "?", l.name[i] ? l.name[i] : "?",
               model[i] ? model[i] : "?", mode[i] ? mode[i] : "?", when, l.v[i]);
    }
    printf("(fathom analyze breakdown URL: one session; --all %s: all of them)\n", relay);
    rc = fflush(stdout) ? 1 : 0;
end:
    for (size_t i = 0; i < l.n; i++) {
        if (model)
            base_free(model[i]);
        if (mode)
            base_free(mode[i]);
    }
    base_free(model);
    base_free(mode);
    url_list_free(&l, 0);
    return rc;
}

/* Before reading a live session: 0 when the relay holds it, or when it
 * may be yet to begin (a name of the user's: lttng-live waits for it);
 * else the one-line error, and 1: the relay does not answer, or a session
 * `fathom record` named (it has begun) is no longer there -- it ended, and
 * a relay keeps no ended session for viewers that come later: its trace is
 * in the relay's output folder, which a relay on this machine tells. */
static int live_check(const char *url)
{
    tracer_live_url u;
    int found = 0;
    char when[64], where[4096];
    if (tracer_live_parse(url, &u) != 0 || !*u.session)
        return 0; /* not a session's URL: lttng-live says what is wrong */
    if (tracer_live_find(&u, &found, NULL) != TRACER_OK) {
        cli_error(cmd, "%s", base_errmsg());
        return 1;
    }
    if (found || !tracer_live_default_name(u.session, when, sizeof when))
        return 0;
    int st = tracer_live_stored(&u, where, sizeof where);
    if (st == 1)
        cli_error(cmd,
                  "%s: the recording (begun %s) has ended and the relay no longer serves it; its trace is in %s "
                  "(fathom analyze breakdown %s)",
                  url, when, where, where);
    else
        cli_error(cmd,
                  "%s: the recording (begun %s) has ended and the relay no longer serves it; its trace is in the "
                  "relay's output folder (lttng-relayd --output, default ~/lttng-traces), under %s/%s-*",
                  url, when, *u.host ? u.host : "HOST", u.session);
    return 1;
}

/* `fathom analyze NAME` (an, what: its name) or, an NULL, `fathom report` */
static int run(const analyze_analysis *an, const char *what, int argc, char **argv, int first);

static int print_session(void *ctx, const tracer_live_session *s)
{
    (*(int *)ctx)++;
    printf("%s  (host %s, session %s, live timer %llu us, %llu streams, %llu clients)\n", s->url, s->host, s->name,
           (unsigned long long)s->timer_us, (unsigned long long)s->streams, (unsigned long long)s->clients);
    return 0;
}

/* fathom analyze --list net://HOST[:PORT]: the relay's live sessions */
static int list_sessions(int argc, char **argv)
{
    if (argc != 3 || strncmp(argv[2], "net://", 6) != 0)
        return cli_usage_error(cmd, "--list wants one relay URL: fathom analyze --list net://HOST[:PORT]");
    int n = 0;
    if (tracer_live_sessions(argv[2], print_session, &n)) {
        cli_error(cmd, "%s", base_errmsg());
        return 1;
    }
    if (!n)
        cli_error(cmd, "%s holds no live session", argv[2]);
    return 0;
}

/* A live session's table so far: on a terminal redrawn in place, piped one
 * table after another (each headed by what it shows: the steps so far, the
 * model, mode and host).  Until the session's first events: a line on
 * stderr at every interval saying what it waits for. */
#define ROW_MAX 512
typedef struct live_view {
    const analyze_analysis *an;
    const analyze_options *opts;
    cli_format fmt;
    int tty, shown;
    const char *url;
    tracer_live_url u;
    double t0, interval;
    unsigned waits;
    size_t nrows; /* several sessions: a row each */
    const char **row_src;
    char (*rows)[ROW_MAX];
} live_view;

static int live_table(void *ctx, const analyze_profile *snap)
{
    live_view *v = ctx;
    analyze_profile *one[1] = { (analyze_profile *)snap };
    if (!snap->meta.have_begin) { /* nothing of the session yet (or no statedump since joining) */
        v->waits++;
        cli_error(cmd, "%s: waiting for %s (%.1f s)", v->url,
                  snap->diag.events ? "the recorder's next statedump" : "the session's first events",
                  v->waits * v->interval);
        return 0;
    }
    if (v->tty)
        fputs("\033[H\033[J", stdout);
    printf("== %s/%s on %s: %llu steps so far, recording goes on", analyze_profile_model(snap),
           analyze_profile_mode(snap), *v->u.host ? v->u.host : "?", (unsigned long long)snap->steps_seen);
    if (snap->joined)
        printf(" (joined at step %llu)", (unsigned long long)snap->joined_step);
    putchar('\n');
    void *res = NULL;
    int io =
        v->an->create(one, 1, v->opts, &res) != ANALYZE_OK || v->an->print(stdout, res, v->fmt, v->opts) != ANALYZE_OK;
    v->an->destroy(res);
    if (!v->tty)
        fputc('\n', stdout);
    v->shown = 1;
    return io || fflush(stdout) ? -1 : 0;
}

/* Several live sessions side by side: one row each, all of them again
 * every interval. */
static int live_rows(void *ctx, const analyze_profile *snap)
{
    live_view *v = ctx;
    size_t k = 0;
    while (k < v->nrows && strcmp(v->row_src[k], snap->source) != 0)
        k++;
    if (k == v->nrows)
        return 0;
    char *row = v->rows[k];
    if (!snap->meta.have_begin) {
        snprintf(row, ROW_MAX, "%s: waiting for its first events", snap->source);
    } else {
        size_t *ord = base_calloc(snap->nops ? snap->nops : 1, sizeof *ord);
        if (!ord)
            return -1;
        analyze_profile_ops_by_time(snap, ord);
        uint64_t tot = analyze_profile_total_ns(snap);
        tracer_live_url u;
        tracer_live_parse(snap->source, &u);
        snprintf(row, ROW_MAX,
                 "%-14.64s %-36.128s %.64s/%.16s: %llu steps so far, %.1f ms in %llu ops, top %.64s %.1f%%", u.host,
                 u.session, analyze_profile_model(snap), analyze_profile_mode(snap),
                 (unsigned long long)snap->steps_seen, (double)tot * 1e-6, (unsigned long long)snap->ops_seen,
                 snap->nops ? snap->ops[ord[0]].name : "-",
                 snap->nops && tot ? 100.0 * (double)snap->ops[ord[0]].all.ns / (double)tot : 0.0);
        base_free(ord);
    }
    if (k + 1 < v->nrows) /* the last session's tick prints them all */
        return 0;
    if (v->tty)
        fputs("\033[H\033[J", stdout);
    printf("== %zu live sessions, recording goes on\n", v->nrows);
    for (size_t i = 0; i < v->nrows; i++)
        printf("%s\n", v->rows[i][0] ? v->rows[i] : "(nothing yet)");
    putchar('\n');
    v->shown = 1;
    return fflush(stdout) ? -1 : 0;
}

static void print_note(void *ctx, const char *line)
{
    (void)ctx;
    cli_error(cmd, "note: %s", line);
}

int cmd_report(int argc, char **argv) { return run(NULL, "report", argc, argv, 1); }

int cmd_analyze(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *what = argv[1];
    if (strcmp(what, "--help") == 0 || strcmp(what, "-h") == 0 || strcmp(what, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(what, "--list") == 0)
        return list_sessions(argc, argv);
    const analyze_analysis *an = analyze_analysis_find(what);
    if (!an) {
        char names[512] = "";
        for (size_t i = 0; i < analyze_nanalyses; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     analyze_analyses[i]->name);
        return cli_usage_error(cmd, "'%s' is not an analysis (%s); see 'fathom analyze --help'", what, names);
    }
    return run(an, what, argc, argv, 2);
}

/* What `fathom analyze NAME` or `fathom report` was asked: its options
 * and its traces. */
typedef struct run_args {
    const analyze_analysis *an; /* NULL: the report */
    const char *what;           /* the analysis's name, or "report" */
    int report;
    unsigned takes; /* the options it takes (ANALYZE_TAKES_*) */
    analyze_read_options ro;
    double interval;
    cli_format fmt;
    int by_class, in_order, strict, png, all_sessions;
    uint32_t top;
    const char *peak_file, *outdir;
    double gflops, gbs;
    const char **traces; /* room for argc, and more once relays and folders are expanded */
    size_t nt;
    char **owned; /* the relays' session URLs and the folders' archives among traces[], freed at the end */
    size_t nowned;
} run_args;

/* The options and traces of argv from first on, into a.  0 to go on; 2
 * after a usage error; -1 after the help was printed. */
static int parse_options(run_args *a, int argc, char **argv, int first)
{
    int only_traces = 0;
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (only_traces || arg[0] != '-' || strcmp(arg, "-") == 0) {
            a->traces[a->nt++] = arg;
        } else if (strcmp(arg, "--") == 0) {
            only_traces = 1;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            if (a->report)
                usage_report(stdout);
            else
                usage_of(a->an, stdout);
            return -1;
        } else if (strcmp(arg, "--format") == 0 && a->report) {
            if (!val || (strcmp(val, "svg") != 0 && strcmp(val, "png") != 0))
                return cli_usage_error(cmd, "report's --format wants svg or png, not '%s'", val ? val : "");
            a->png = strcmp(val, "png") == 0, i++;
        } else if ((strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) && a->report) {
            if (!val || !*val)
                return cli_usage_error(cmd, "%s wants a folder", arg);
            a->outdir = val, i++;
        } else if (strcmp(arg, "--format") == 0) {
            int f = cli_parse_format(cmd, val, 1);
            if (f < 0)
                return 2;
            a->fmt = (cli_format)f, i++;
        } else if (strcmp(arg, "--skip-first") == 0 && (a->takes & ANALYZE_TAKES_WINDOW)) {
            if (parse_u32(arg, val, &a->ro.skip_first))
                return 2;
            i++;
        } else if (strcmp(arg, "--skip-last") == 0 && (a->takes & ANALYZE_TAKES_WINDOW)) {
            if (parse_u32(arg, val, &a->ro.skip_last))
                return 2;
            i++;
        } else if (strcmp(arg, "--top") == 0 && (a->takes & ANALYZE_TAKES_TOP)) {
            if (parse_u32(arg, val, &a->top))
                return 2;
            i++;
        } else if (strcmp(arg, "--by") == 0 && (a->takes & ANALYZE_TAKES_BY)) {
            if (!val || (strcmp(val, "type") != 0 && strcmp(val, "class") != 0))
                return cli_usage_error(cmd, "--by wants 'type' or 'class', not '%s'", val ? val : "");
            a->by_class = strcmp(val, "class") == 0, i++;
        } else if (strcmp(arg, "--pairs") == 0 && (a->takes & ANALYZE_TAKES_PAIRS)) {
            a->in_order = 1;
        } else if (strcmp(arg, "--peak") == 0 && (a->takes & ANALYZE_TAKES_PEAKS)) {
            if (!val)
                return cli_usage_error(cmd, "--peak wants a file written by 'fathom peak --format json'");
            a->peak_file = val, i++;
        } else if ((strcmp(arg, "--gflops") == 0 || strcmp(arg, "--gbs") == 0) && (a->takes & ANALYZE_TAKES_PEAKS)) {
            double *rate = strcmp(arg, "--gflops") == 0 ? &a->gflops : &a->gbs;
            if (parse_number(arg, val, ANALYZE_RATE_MIN, ANALYZE_RATE_MAX, rate))
                return 2;
            i++;
        } else if (strcmp(arg, "--strict") == 0) {
            a->strict = 1;
        } else if (strcmp(arg, "--all") == 0 && !a->report) {
            a->all_sessions = 1;
        } else if (strcmp(arg, "--interval") == 0 && !a->report) {
            /* a live table redrawn at most ten times a second, at least once a day */
            if (parse_number(arg, val, 0.1, 86400, &a->interval))
                return 2;
            i++;
        } else if (strcmp(arg, "--skip-first") == 0 || strcmp(arg, "--skip-last") == 0) {
            return cli_usage_error(cmd, "%s does not apply to %s: it follows the whole run", arg, a->what);
        } else {
            return cli_usage_error(cmd, "unknown option '%s' for %s; see 'fathom %s --help'", arg, a->what,
                                   a->report ? "report" : "analyze");
        }
    }
    return 0;
}

/* Each relay without a session replaced by its sessions (with --all), each
 * folder of archives by its archives.  0 to go on; otherwise the command
 * ends here with *rc: a relay's sessions listed (without --all), or an
 * error. */
static int expand_traces(run_args *a, int argc, int *rc)
{
    for (size_t i = 0; i < a->nt; i++) {
        tracer_live_url u;
        const char **more = NULL;
        size_t nmore = 0;
        if (strncmp(a->traces[i], "net://", 6) != 0) {
            if (archives_in(a->traces[i], &more, &nmore) != 0) {
                *rc = cli_usage_error(cmd, "out of memory");
                return 1;
            }
            if (!nmore)
                continue;
        } else if (tracer_live_parse(a->traces[i], &u) != 0 || *u.session) {
            continue;
        } else if (!a->all_sessions) {
            *rc = list_described(a->traces[i]);
            return 1;
        } else if (relay_urls(a->traces[i], &more, &nmore) != 0) {
            *rc = 1;
            return 1;
        }
        const char **v = base_realloc(a->traces, (a->nt + nmore + (size_t)argc) * sizeof *v);
        char **o = v ? base_realloc(a->owned, (a->nowned + nmore) * sizeof *o) : NULL;
        if (v)
            a->traces = v;
        if (o)
            a->owned = o;
        if (!v || !o) {
            for (size_t k = 0; k < nmore; k++)
                base_free((void *)more[k]);
            base_free(more);
            *rc = cli_usage_error(cmd, "out of memory");
            return 1;
        }
        memcpy(a->owned + a->nowned, more, nmore * sizeof *more);
        a->nowned += nmore;
        memmove(&a->traces[i + nmore], &a->traces[i + 1], (a->nt - i - 1) * sizeof *a->traces);
        memcpy(&a->traces[i], more, nmore * sizeof *a->traces);
        a->nt += nmore - 1;
        i += nmore - 1;
        base_free(more); /* the URLs and paths stay in owned[] to the end */
    }
    return 0;
}

/* As many traces as the analysis takes.  0, or 2 after a usage error. */
static int check_traces(const run_args *a)
{
    if (a->all_sessions && a->nt == 0)
        return cli_usage_error(cmd, "--all wants a relay: fathom analyze %s --all net://HOST[:PORT]", a->what);
    if (a->an && a->an->traces_rule && (a->nt < a->an->min_traces || (a->an->max_traces && a->nt > a->an->max_traces)))
        return cli_usage_error(cmd, "%s wants %s, not %zu", a->what, a->an->traces_rule, a->nt);
    if (!a->nt)
        return cli_usage_error(cmd, "%s wants at least one TRACE", a->what);
    return 0;
}

/* The recording machine's ceilings, from --peak's file and --gflops and
 * --gbs.  0; 1 if the file cannot be read; 2 if none is given. */
static int load_peaks(const run_args *a, analyze_peaks *peaks)
{
    if (a->peak_file && analyze_peaks_load(a->peak_file, peaks) != 0) {
        cli_error(cmd, "%s", base_errmsg());
        return 1;
    }
    if (analyze_peaks_override(peaks, a->peak_file != NULL, a->gflops, a->gbs) != 0)
        return cli_usage_error(cmd,
                               "%s wants the recording machine's ceilings: --peak FILE (from 'fathom peak --format "
                               "json' run there), or --gflops X and --gbs Y",
                               a->report ? "the roofline" : a->what);
    return 0;
}

/* Every trace read into p[] (as a live table, or rows, while live
 * sessions go on), and the warnings each earned said.  0, or 1. */
static int read_profiles(run_args *a, live_view *lv, analyze_profile **p)
{
    for (size_t i = 0; i < a->nt; i++) /* a live session: the relay holds it, or it has ended */
        if (strncmp(a->traces[i], "net://", 6) == 0 && live_check(a->traces[i]) != 0)
            return 1;
    /* a live session read alone: its table so far at every interval */
    int live = a->nt == 1 && strncmp(a->traces[0], "net://", 6) == 0 && a->an && (a->an->takes & ANALYZE_TAKES_LIVE) &&
               a->fmt == CLI_TEXT; /* CSV and JSON: one document, the final one */
    if (live)
        tracer_live_parse(a->traces[0], &lv->u);
    int all_live = a->nt > 1 && a->fmt == CLI_TEXT && a->an;
    for (size_t i = 0; all_live && i < a->nt; i++)
        all_live = strncmp(a->traces[i], "net://", 6) == 0;
    if (all_live) { /* side by side: a row each, every interval */
        lv->nrows = a->nt;
        lv->row_src = a->traces;
        if (!(lv->rows = base_calloc(a->nt, sizeof *lv->rows))) {
            cli_usage_error(cmd, "out of memory");
            return 1;
        }
        a->ro.progress_each = 1;
    }
    a->ro.progress = live ? live_table : all_live ? live_rows : NULL;
    a->ro.progress_ctx = lv;
    a->ro.interval = a->interval;
    a->ro.dataflow = (a->takes & ANALYZE_TAKES_FLOW) != 0;
    if (analyze_read_many(a->traces, a->nt, &a->ro, p) != 0) {
        cli_error(cmd, "%s", base_errmsg());
        return 1;
    }

    for (size_t i = 0; i < a->nt; i++) /* a step window that keeps nothing: as replay and tune say it */
        if (p[i]->steps_seen && !analyze_profile_steps_kept(p[i])) {
            cli_error(cmd, "%s: skipping %u + %u of %llu steps leaves none", a->traces[i], p[i]->skip_first,
                      p[i]->skip_last, (unsigned long long)p[i]->steps_seen);
            return 1;
        }
    int warned = 0;
    for (size_t i = 0; i < a->nt; i++) {
        char w[4096];
        if (analyze_profile_warnings(p[i], w, sizeof w)) {
            warned = 1;
            for (char *line = strtok(w, "\n"); line; line = strtok(NULL, "\n"))
                cli_error(cmd, "warning: %s: %s", a->traces[i], line);
        }
    }
    if (a->strict && warned) {
        cli_error(cmd, "--strict: giving up on the warnings above");
        return 1;
    }
    return 0;
}

/* The analysis printed, or the report written.  0, or 1. */
static int print_results(const run_args *a, const analyze_options *ao, const live_view *lv, analyze_profile **p)
{
    const analyze_analysis *an = a->an;
    analyze_status io = ANALYZE_OK;
    if (lv->shown && lv->tty)
        fputs("\033[H\033[J", stdout); /* the final table replaces the last one */
    else if (lv->shown)
        printf("== final (the session ended)\n");
    if (a->report) {
        analyze_html_opts ho = { .dir = a->outdir, .png = a->png, .top = a->top, .peaks = ao->peaks };
        if (analyze_html_write(p, a->nt, &ho) != 0) {
            cli_error(cmd, "%s", base_errmsg());
            return 1;
        }
        printf("%s/index.html\n", a->outdir);
    } else {
        void *res = NULL;
        char w[1024];
        if (an->create(p, a->nt, ao, &res) != ANALYZE_OK) {
            cli_error(cmd, "%s", base_errmsg());
            return 1;
        }
        if (an->mismatch && gives_up(an->mismatch(res, w, sizeof w), w, a->strict)) {
            an->destroy(res);
            return 1;
        }
        if (an->notes)
            an->notes(res, a->fmt, print_note, NULL);
        io = an->print(stdout, res, a->fmt, ao);
        an->destroy(res);
    }
    if (io == ANALYZE_ERR_NOMEM) {
        cli_error(cmd, "%s", base_errmsg());
        return 1;
    }
    if (io != ANALYZE_OK || fflush(stdout) != 0) {
        cli_error(cmd, "cannot write the output: %s", errno ? strerror(errno) : "error");
        return 1;
    }
    return 0;
}

static int run(const analyze_analysis *an, const char *what, int argc, char **argv, int first)
{
    run_args a = {
        .an = an,
        .what = what,
        .report = !an,
        /* the report's: its roofline's ceilings, its step window, the data flow of its parallelism */
        .takes = an ? an->takes : ANALYZE_TAKES_TOP | ANALYZE_TAKES_PEAKS | ANALYZE_TAKES_WINDOW | ANALYZE_TAKES_FLOW,
        .interval = 2.0,
        .fmt = CLI_TEXT,
        .top = an ? 0 : 12,
        .outdir = "report",
    };
    cmd = a.report ? "report" : "analyze";
    if (!(a.traces = base_calloc((size_t)argc, sizeof *a.traces)))
        return cli_usage_error(cmd, "out of memory");
    int rc = parse_options(&a, argc, argv, first);
    if (rc) {
        rc = rc < 0 ? 0 : rc; /* the help: done */
        goto end;
    }
    if (expand_traces(&a, argc, &rc) || (rc = check_traces(&a)))
        goto end;

    analyze_peaks peaks = { 0 };
    int have_peaks = (an && (an->takes & ANALYZE_TAKES_PEAKS)) || a.peak_file || a.gflops || a.gbs;
    if (have_peaks && (rc = load_peaks(&a, &peaks)))
        goto end;
    analyze_options ao = {
        .top = a.top, .by_class = a.by_class, .in_order = a.in_order, .peaks = have_peaks ? &peaks : NULL
    };
    if (a.report) { /* the output rule (tracer/output.h): never into an input */
        char page[4200];
        snprintf(page, sizeof page, "%s/index.html", a.outdir);
        if (tracer_output_check(page, a.traces, a.nt, "-o") == TRACER_OUTPUT_EALIAS) {
            cli_error(cmd, "%s", base_errmsg());
            rc = 1;
            goto end;
        }
    }

    analyze_profile **p = base_calloc(a.nt, sizeof *p);
    if (!p) {
        rc = cli_usage_error(cmd, "out of memory");
        goto end;
    }
    live_view lv = {
        .an = an, .opts = &ao, .fmt = a.fmt, .tty = isatty(1), .url = a.traces[0], .interval = a.interval
    };
    rc = read_profiles(&a, &lv, p) || print_results(&a, &ao, &lv, p) ? 1 : 0;
    for (size_t i = 0; i < a.nt; i++)
        analyze_profile_destroy(p[i]);
    base_free(p);
    base_free(lv.rows);
end:
    for (size_t k = 0; k < a.nowned; k++)
        base_free(a.owned[k]);
    base_free(a.owned);
    base_free(a.traces);
    return rc;
}
