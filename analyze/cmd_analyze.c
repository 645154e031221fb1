/* cmd_analyze.c -- `fathom analyze breakdown|compare|similarity|scaling|roofline|
 * memory TRACE...`, `fathom analyze diff A B` and `fathom report TRACE...`.
 * Reads every trace (archive, CTF directory or net:// URL) into a profile,
 * prints the warnings each one earned on stderr, then the analysis (or,
 * for report, the charts and the HTML page). */
#include "analyze/cmd_analyze.h"

#include "analyze/html.h"
#include "analyze/memory.h"
#include "analyze/parallelism.h"
#include "analyze/profile.h"
#include "analyze/read.h"
#include "analyze/report.h"
#include "analyze/roofline.h"
#include "tracer/output.h"
#include "tracer/read.h"

#include <math.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "fathom analyze" or "fathom report": the prefix of every message */
static const char *prog = "fathom analyze";

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

enum kind { BREAKDOWN, COMPARE, SIMILARITY, DIFF, SCALING, ROOFLINE, MEMORY, REPORT };

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
    return 2;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fathom analyze breakdown  [options] TRACE...\n"
            "       fathom analyze compare    [options] [--pairs] TRACE...\n"
            "       fathom analyze similarity [options] [--by type|class] TRACE...\n"
            "       fathom analyze diff       [options] A B\n"
            "       fathom analyze scaling    [options] TRACE TRACE...\n"
            "       fathom analyze roofline   [options] --peak FILE | --gflops X --gbs Y TRACE...\n"
            "       fathom analyze memory     [options] TRACE...\n"
            "       fathom analyze parallelism [options] TRACE...\n"
            "\n"
            "Analyzes recorded traces offline: TRACE is a trace archive (.tar.zst), a CTF\n"
            "directory, or a net://HOST/host/HOSTNAME/SESSION lttng-live URL.\n"
            "\n"
            "  breakdown   time by op type, class and phase; how few op types make 90%%;\n"
            "              a models x classes table when several traces are given\n"
            "  compare     training vs inference of each model: step time ratio, class\n"
            "              shares side by side, the ops only training runs\n"
            "  similarity  cosine similarity of op-type time vectors, average-linkage\n"
            "              clustering on 1 - cosine, printed as a dendrogram\n"
            "  diff        two traces of one model (a recording and its replay, two\n"
            "              machines or settings): step time and, per op type and class,\n"
            "              time per step in A (the baseline) and in B, ratio B/A, delta\n"
            "  scaling     traces of one model at different thread counts: step time,\n"
            "              speedup and efficiency; per op type and class, time per step\n"
            "              at each thread count and an Amdahl fit (serial fraction)\n"
            "  roofline    per op type and class: arithmetic intensity (FLOP/byte), achieved\n"
            "              GFLOP/s and GB/s against the recording machine's ceilings (from\n"
            "              `fathom peak --format json > FILE` run there), the fraction of\n"
            "              the roof reached, memory- or compute-bound; with several traces\n"
            "              (batch sizes, thread counts) each op type's trajectory\n"
            "  memory      tensor memory by role (weights, activations, gradients...): at the\n"
            "              peak and each role's own peak, when the peak is reached, and the\n"
            "              live bytes over the steps\n"
            "  parallelism the data flow's average parallelism: op time over the critical\n"
            "              path's per step (what inter-op workers can gain)\n"
            "\n"
            "options:\n"
            "  --format text|csv|json  output format (default text)\n"
            "  --skip-first N          drop the first N steps (warm-up)\n"
            "  --skip-last N           drop the last N steps\n"
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
            "\n`fathom analyze --list net://HOST[:PORT]` lists the live sessions a relay holds.\n"
            "See fathom-analyze(1).\n");
}

/* One analysis's own help (`fathom analyze NAME --help`): its synopsis,
 * what it answers, and the options it takes. */
static const struct analysis_help {
    enum kind kind;
    const char *synopsis, *what, *options;
} helps[] = {
    { BREAKDOWN, "breakdown [options] TRACE...",
      "Time by op type, by class and by phase; the top op types and how few of them make\n"
      "90% of the op time; a models x classes table when several traces are given.\n",
      "  --top N                 show only the first N op types (text)\n" },
    { COMPARE, "compare [options] [--pairs] TRACE...",
      "Training vs inference of each model: the step time ratio, the class shares side\n"
      "by side and the op types only training runs. Traces are paired by model name.\n",
      "  --pairs                 the traces are TRAIN INFER [TRAIN INFER...], in that order\n" },
    { SIMILARITY, "similarity [options] [--by type|class] TRACE...",
      "Cosine similarity of the traces' op-type (or class) time vectors and their\n"
      "average-linkage clustering on 1 - cosine, printed as a dendrogram.\n",
      "  --by type|class         vectors of op types (default) or of classes\n" },
    { DIFF, "diff [options] A B",
      "Two traces of one model (a recording and its replay, two machines or settings):\n"
      "the step time and, per op type and class, the time per step in A (the baseline)\n"
      "and in B, their ratio B/A and the change.\n",
      "  --top N                 show only the first N op types (text)\n" },
    { SCALING, "scaling [options] TRACE TRACE...",
      "Traces of one model at different thread counts: step time, speedup and\n"
      "efficiency; per op type and class the time per step at each thread count and an\n"
      "Amdahl fit (the serial fraction).\n",
      "  --top N                 show only the first N op types (text)\n" },
    { ROOFLINE, "roofline [options] --peak FILE | --gflops X --gbs Y TRACE...",
      "Per op type and class: arithmetic intensity (FLOP/byte), achieved GFLOP/s and\n"
      "GB/s against the recording machine's ceilings (from `fathom peak --format json >\n"
      "FILE` run there), the fraction of the roof reached, memory- or compute-bound;\n"
      "with several traces (batch sizes, thread counts) each op type's trajectory.\n",
      "  --peak FILE             the ceilings, from `fathom peak --format json`\n"
      "  --gflops X, --gbs Y     the compute and memory ceilings (override --peak)\n"
      "  --top N                 show only the first N op types (text)\n" },
    { MEMORY, "memory [options] TRACE...",
      "Tensor memory by role (weights, activations, gradients, optimizer state, inputs,\n"
      "workspace): at the peak and each role's own peak, when the peak is reached, and\n"
      "the live bytes over the steps.\n",
      "" },
};

static void usage_of(enum kind kind, FILE *f)
{
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        const struct analysis_help *h = &helps[i];
        if (h->kind != kind)
            continue;
        fprintf(f,
                "usage: fathom analyze %s\n\n%s\nTRACE is a trace archive (.tar.zst), a CTF directory, or a\n"
                "net://HOST/host/HOSTNAME/SESSION lttng-live URL.\n\noptions:\n%s"
                "  --format text|csv|json  output format (default text)\n"
                "  --skip-first N          drop the first N steps (warm-up)\n"
                "  --skip-last N           drop the last N steps\n"
                "  --strict                warnings (lost events, unmatched pairs...) are errors\n"
                "  --interval S            of one net:// live session (breakdown, memory): the table so\n"
                "                          far every S seconds (default 2), then the final one\n"
                "\nAll analyses: 'fathom analyze --help'; see fathom-analyze(1).\n",
                h->synopsis, h->what, h->options);
        return;
    }
    usage(f);
}

static void usage_report(FILE *f)
{
    fprintf(f,
            "usage: fathom report [options] [-o DIR] TRACE...\n"
            "\n"
            "Writes every analysis of the traces as charts and one HTML page into DIR (default\n"
            "'report'; it must not exist or be empty): DIR/index.html with the op time by\n"
            "class and by op type, training vs inference, the similarity matrix and\n"
            "dendrogram, the roofline (with ceilings) and the tensor memory by role.\n"
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

static int parse_positive(const char *opt, const char *arg, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = arg ? strtod(arg, &end) : 0;
    if (!arg || isspace((unsigned char)arg[0]) || errno || !end || *end || end == arg || !isfinite(v) || v <= 0)
        return usage_error("%s wants a positive number, not '%s'", opt, arg ? arg : "");
    *out = v;
    return 0;
}

static int parse_u32(const char *opt, const char *arg, uint32_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = arg ? strtoul(arg, &end, 10) : 0;
    if (!arg || !isdigit((unsigned char)arg[0]) || errno || !end || *end || end == arg || v > 1000000000ul)
        return usage_error("%s wants a non-negative integer, not '%s'", opt, arg ? arg : "");
    *out = (uint32_t)v;
    return 0;
}

/* The traces are not of one model and mode (message w): a warning, and
 * with --strict the end (returns 1). */
static int gives_up(int mismatch, const char *w, int strict)
{
    if (!mismatch)
        return 0;
    say("warning: %s\n", w);
    if (strict)
        say("--strict: giving up on the warning above\n");
    return strict;
}

static int run(enum kind kind, const char *what, int argc, char **argv, int first);

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
        return usage_error("--list wants one relay URL: fathom analyze --list net://HOST[:PORT]");
    char err[1024];
    int n = 0;
    if (tracer_live_sessions(argv[2], print_session, &n, err, sizeof err)) {
        say("%s\n", err);
        return 1;
    }
    if (!n)
        say("%s holds no live session\n", argv[2]);
    return 0;
}

/* A live session's table so far: on a terminal redrawn in place, piped one
 * table after another (each headed by the time it was taken). */
typedef struct live_view {
    enum kind kind;
    analyze_format fmt;
    uint32_t top;
    int tty, shown;
} live_view;

static int live_table(void *ctx, const analyze_profile *snap)
{
    live_view *v = ctx;
    analyze_profile *one[1] = { (analyze_profile *)snap };
    if (v->tty)
        fputs("\033[H\033[J", stdout);
    else
        printf("== so far: %llu steps (the session goes on)\n", (unsigned long long)snap->steps_seen);
    int io = v->kind == MEMORY ? analyze_memory_print(stdout, one, 1, v->fmt)
                               : analyze_breakdown(stdout, one, 1, v->fmt, v->top);
    if (!v->tty)
        fputc('\n', stdout);
    v->shown = 1;
    return io || fflush(stdout) ? -1 : 0;
}

int cmd_report(int argc, char **argv) { return run(REPORT, "report", argc, argv, 1); }

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
    if (strcmp(what, "parallelism") == 0)
        return analyze_parallelism_main(argc - 1, argv + 1);
    enum kind kind;
    if (strcmp(what, "breakdown") == 0)
        kind = BREAKDOWN;
    else if (strcmp(what, "compare") == 0)
        kind = COMPARE;
    else if (strcmp(what, "similarity") == 0)
        kind = SIMILARITY;
    else if (strcmp(what, "diff") == 0)
        kind = DIFF;
    else if (strcmp(what, "scaling") == 0)
        kind = SCALING;
    else if (strcmp(what, "roofline") == 0)
        kind = ROOFLINE;
    else if (strcmp(what, "memory") == 0)
        kind = MEMORY;
    else
        return usage_error("'%s' is not an analysis (breakdown, compare, similarity, diff, scaling, roofline, "
                           "memory); see 'fathom analyze --help'",
                           what);
    return run(kind, what, argc, argv, 2);
}

static int run(enum kind kind, const char *what, int argc, char **argv, int first)
{
    prog = kind == REPORT ? "fathom report" : "fathom analyze";
    analyze_read_options ro = { 0 };
    double interval = 2.0;
    analyze_format fmt = ANALYZE_TEXT;
    int by_class = 0, in_order = 0, strict = 0;
    uint32_t top = kind == REPORT ? 12 : 0;
    const char *peak_file = NULL, *outdir = "report";
    int png = 0;
    double gflops = 0, gbs = 0;
    const char **traces = calloc((size_t)argc, sizeof *traces);
    size_t nt = 0;
    if (!traces)
        return usage_error("out of memory");
    int rc = 2, only_traces = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (only_traces || a[0] != '-' || strcmp(a, "-") == 0) {
            traces[nt++] = a;
        } else if (strcmp(a, "--") == 0) {
            only_traces = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            if (kind == REPORT)
                usage_report(stdout);
            else
                usage_of(kind, stdout);
            rc = 0;
            goto end;
        } else if (strcmp(a, "--format") == 0 && kind == REPORT) {
            if (!val || (strcmp(val, "svg") != 0 && strcmp(val, "png") != 0)) {
                usage_error("report's --format wants svg or png, not '%s'", val ? val : "");
                goto end;
            }
            png = strcmp(val, "png") == 0, i++;
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && kind == REPORT) {
            if (!val || !*val) {
                usage_error("%s wants a folder", a);
                goto end;
            }
            outdir = val, i++;
        } else if (strcmp(a, "--format") == 0) {
            int f = analyze_format_parse(val);
            if (f < 0) {
                usage_error("unknown format '%s' (use text, csv or json)", val ? val : "");
                goto end;
            }
            fmt = (analyze_format)f, i++;
        } else if (strcmp(a, "--skip-first") == 0) {
            if (parse_u32(a, val, &ro.skip_first))
                goto end;
            i++;
        } else if (strcmp(a, "--skip-last") == 0) {
            if (parse_u32(a, val, &ro.skip_last))
                goto end;
            i++;
        } else if (strcmp(a, "--top") == 0 &&
                   (kind == BREAKDOWN || kind == DIFF || kind == SCALING || kind == ROOFLINE || kind == REPORT)) {
            if (parse_u32(a, val, &top))
                goto end;
            i++;
        } else if (strcmp(a, "--by") == 0 && kind == SIMILARITY) {
            if (!val || (strcmp(val, "type") != 0 && strcmp(val, "class") != 0)) {
                usage_error("--by wants 'type' or 'class', not '%s'", val ? val : "");
                goto end;
            }
            by_class = strcmp(val, "class") == 0, i++;
        } else if (strcmp(a, "--pairs") == 0 && kind == COMPARE) {
            in_order = 1;
        } else if (strcmp(a, "--peak") == 0 && (kind == ROOFLINE || kind == REPORT)) {
            if (!val) {
                usage_error("--peak wants a file written by 'fathom peak --format json'");
                goto end;
            }
            peak_file = val, i++;
        } else if (strcmp(a, "--gflops") == 0 && (kind == ROOFLINE || kind == REPORT)) {
            if (parse_positive(a, val, &gflops))
                goto end;
            i++;
        } else if (strcmp(a, "--gbs") == 0 && (kind == ROOFLINE || kind == REPORT)) {
            if (parse_positive(a, val, &gbs))
                goto end;
            i++;
        } else if (strcmp(a, "--strict") == 0) {
            strict = 1;
        } else if (strcmp(a, "--interval") == 0 && kind != REPORT) {
            if (parse_positive(a, val, &interval))
                goto end;
            i++;
        } else {
            usage_error("unknown option '%s' for %s; see 'fathom %s --help'", a, what,
                        kind == REPORT ? "report" : "analyze");
            goto end;
        }
    }
    if (kind == DIFF && nt != 2) {
        usage_error("diff wants exactly two traces (A, the baseline, then B), not %zu", nt);
        goto end;
    }
    if (kind == SCALING && nt < 2) {
        usage_error("scaling wants at least two traces (one model at different thread counts), not %zu", nt);
        goto end;
    }
    if (!nt) {
        usage_error("%s wants at least one TRACE", what);
        goto end;
    }
    analyze_peaks peaks = { 0 };
    int have_peaks = kind == ROOFLINE || peak_file || gflops || gbs;
    if (have_peaks) {
        if (!peak_file && (!gflops || !gbs)) {
            usage_error("%s wants the recording machine's ceilings: --peak FILE (from 'fathom peak --format "
                        "json' run there), or --gflops X and --gbs Y", kind == REPORT ? "the roofline" : "roofline");
            goto end;
        }
        char err[1024];
        if (peak_file && analyze_peaks_load(peak_file, &peaks, err, sizeof err) != 0) {
            say("%s\n", err);
            rc = 1;
            goto end;
        }
        if (gflops) /* one ceiling for every thread count */
            peaks.gflops = gflops, peaks.nsgemm = 0;
        if (gbs)
            peaks.gbs = gbs;
    }

    if (kind == REPORT) { /* the output rule (tracer/output.h): never into an input */
        char page[4200], err[8800];
        snprintf(page, sizeof page, "%s/index.html", outdir);
        if (tracer_output_check(page, traces, nt, "-o", err, sizeof err) == TRACER_OUTPUT_EALIAS) {
            say("%s\n", err);
            rc = 1;
            goto end;
        }
    }
    analyze_profile **p = calloc(nt, sizeof *p);
    if (!p) {
        usage_error("out of memory");
        goto end;
    }
    rc = 1;
    int warned = 0;
    live_view lv = { .kind = kind, .fmt = fmt, .top = top, .tty = isatty(1) };
    /* a live session read alone: its table so far at every interval */
    int live = nt == 1 && strncmp(traces[0], "net://", 6) == 0 && (kind == BREAKDOWN || kind == MEMORY) &&
               fmt == ANALYZE_TEXT; /* CSV and JSON: one document, the final one */
    ro.progress = live ? live_table : NULL;
    ro.progress_ctx = &lv;
    ro.interval = interval;
    char rerr[1024];
    if (analyze_read_many(traces, nt, &ro, p, rerr, sizeof rerr) != 0) {
        say("%s\n", rerr);
        goto done;
    }
    for (size_t i = 0; i < nt; i++) {
        char w[4096];
        if (analyze_profile_warnings(p[i], w, sizeof w)) {
            warned = 1;
            for (char *line = strtok(w, "\n"); line; line = strtok(NULL, "\n"))
                say("warning: %s: %s\n", traces[i], line);
        }
    }
    if (strict && warned) {
        say("--strict: giving up on the warnings above\n");
        goto done;
    }
    int io = 0;
    if (lv.shown && lv.tty)
        fputs("\033[H\033[J", stdout); /* the final table replaces the last one */
    else if (lv.shown)
        printf("== final (the session ended)\n");
    if (kind == DIFF) {
        analyze_diff *d = analyze_diff_create(p[0], p[1]);
        char w[512];
        if (!d) {
            say("out of memory\n");
            goto done;
        }
        if (gives_up(analyze_diff_mismatch(d, w, sizeof w), w, strict)) {
            analyze_diff_destroy(d);
            goto done;
        }
        for (size_t i = 0; i < 2 && fmt != ANALYZE_TEXT; i++) /* the text output says so itself */
            if (!analyze_profile_steps_kept(p[i]))
                say(
                        "note: %s (%s) has no kept steps: its whole-trace totals are compared\n",
                        i ? "B" : "A", traces[i]);
        io = analyze_diff_print(stdout, d, fmt, top);
        analyze_diff_destroy(d);
    } else if (kind == SCALING) {
        char err[1024], w[1024];
        analyze_scaling *s = analyze_scaling_create(p, nt, err, sizeof err);
        if (!s) {
            say("%s\n", err);
            goto done;
        }
        if (gives_up(analyze_scaling_mismatch(s, w, sizeof w), w, strict)) {
            analyze_scaling_destroy(s);
            goto done;
        }
        for (size_t i = 0; i < nt && fmt != ANALYZE_TEXT; i++) /* the text output says so itself */
            if (!analyze_profile_steps_kept(p[i]))
                say("note: %s has no kept steps: its whole-trace totals are used\n",
                        traces[i]);
        io = analyze_scaling_print(stdout, s, fmt, top);
        analyze_scaling_destroy(s);
    } else if (kind == ROOFLINE) {
        char err[1024], w[1024];
        analyze_roofline *r = analyze_roofline_create(p, nt, &peaks, err, sizeof err);
        if (!r) {
            say("%s\n", err);
            goto done;
        }
        if (gives_up(analyze_roofline_mismatch(r, w, sizeof w), w, strict)) {
            analyze_roofline_destroy(r);
            goto done;
        }
        io = analyze_roofline_print(stdout, r, fmt, top);
        analyze_roofline_destroy(r);
    } else if (kind == REPORT) {
        char err[1024];
        analyze_html_opts ho = { .dir = outdir, .png = png, .top = top, .peaks = have_peaks ? &peaks : NULL };
        if (analyze_html_write(p, nt, &ho, err, sizeof err) != 0) {
            say("%s\n", err);
            goto done;
        }
        printf("%s/index.html\n", outdir);
    } else if (kind == MEMORY) {
        io = analyze_memory_print(stdout, p, nt, fmt);
    } else if (kind == BREAKDOWN) {
        io = analyze_breakdown(stdout, p, nt, fmt, top);
    } else if (kind == COMPARE) {
        analyze_pair *pairs = calloc(nt, sizeof *pairs);
        int *used = calloc(nt, sizeof *used);
        char err[1024];
        int np = pairs && used ? analyze_pairs(p, nt, in_order, pairs, used, err, sizeof err) : -1;
        if (np < 0) {
            say("%s\n", pairs && used ? err : "out of memory");
            free(pairs), free(used);
            goto done;
        }
        for (size_t i = 0; i < nt; i++)
            if (!used[i])
                say("note: %s (%s %s) has no %s partner; left out\n", traces[i],
                        analyze_profile_model(p[i]), analyze_profile_mode(p[i]),
                        p[i]->meta.mode && strcmp(p[i]->meta.mode, "train") == 0 ? "inference" : "training");
        io = analyze_compare(stdout, p, pairs, (size_t)np, fmt);
        free(pairs), free(used);
    } else {
        analyze_sim *s = analyze_sim_create(p, nt, by_class);
        io = s ? analyze_similarity(stdout, s, by_class, fmt) : -1;
        analyze_sim_destroy(s);
    }
    if (io != 0 || fflush(stdout) != 0) {
        say("cannot write the output: %s\n", errno ? strerror(errno) : "error");
        goto done;
    }
    rc = 0;
done:
    for (size_t i = 0; i < nt; i++)
        analyze_profile_destroy(p[i]);
    free(p);
end:
    free(traces);
    return rc;
}
