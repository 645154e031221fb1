/* html.c -- `fathom report`'s folder: the charts and index.html (html.h). */
#include "analyze/html.h"
#include "analyze/analyze_status.h"

#include "analyze/memory.h"
#include "analyze/out.h"
#include "analyze/plot.h"
#include "analyze/breakdown.h"
#include "analyze/compare.h"
#include "analyze/parallelism.h"
#include "analyze/ranks.h"
#include "analyze/gpu.h"
#include "analyze/scaling.h"
#include "analyze/similarity.h"
#include "base/alloc.h"
#include "base/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#define MAX_FILES 16
#define MAX_SCALING 6 /* models with a scaling chart */

typedef struct page {
    const analyze_html_opts *o;
    char files[MAX_FILES][64]; /* written so far, to remove on an error */
    size_t nfiles;
    int made_dir;
} page;

/* 1 if dir does not exist (0 if it is an empty folder); -1 otherwise (the thread's message). */
static int fresh_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno == ENOENT ? 1 : analyze_fail_rc(ANALYZE_ERR_IO, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return analyze_fail_rc(ANALYZE_ERR_IO,
                               "%s exists and is not a folder: nothing is overwritten; choose another -o", dir);
    DIR *d = opendir(dir);
    if (!d)
        return analyze_fail_rc(ANALYZE_ERR_IO, "%s: %s", dir, strerror(errno));
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)))
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty ? 0
                 : analyze_fail_rc(ANALYZE_ERR_IO, "%s is not empty: nothing is overwritten; choose another -o", dir);
}

/* dir/name into buf, remembered for the cleanup. */
static const char *file(page *pg, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", pg->o->dir, name);
    if (pg->nfiles < MAX_FILES)
        snprintf(pg->files[pg->nfiles++], sizeof pg->files[0], "%s", name);
    return buf;
}

static void cleanup(page *pg)
{
    char path[4200];
    for (size_t i = 0; i < pg->nfiles; i++) {
        snprintf(path, sizeof path, "%s/%s", pg->o->dir, pg->files[i]);
        unlink(path);
    }
    if (pg->made_dir)
        rmdir(pg->o->dir);
}

/* A text analysis into a <pre>, through a memory stream. */
typedef int (*text_fn)(FILE *f, const void *ctx);
static int pre(FILE *out, text_fn fn, const void *ctx, const char *summary)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return -1;
    int rc = fn(m, ctx);
    if (fclose(m) != 0)
        rc = -1;
    if (rc == 0) {
        fputs("<details><summary>", out);
        analyze_out_xml(out, summary);
        fputs("</summary>\n<pre>", out);
        analyze_out_xml(out, buf);
        fputs("</pre></details>\n", out);
    }
    free(buf); /* open_memstream's */
    return rc;
}

typedef struct profiles {
    analyze_profile *const *p;
    size_t n, top;
    const analyze_pair *pairs;
    size_t npairs;
    const analyze_sim *sim;
    const analyze_roofline *roof;
    const analyze_scaling *scaling; /* the one being printed */
    const analyze_parallelism *par;
    const analyze_ranks *ranks;
    const analyze_gpu *gpu;
} profiles;

static int t_breakdown(FILE *f, const void *c)
{
    const profiles *x = c;
    return analyze_breakdown(f, x->p, x->n, CLI_TEXT, x->top);
}
static int t_compare(FILE *f, const void *c)
{
    const profiles *x = c;
    return analyze_compare(f, x->p, x->pairs, x->npairs, CLI_TEXT);
}
static int t_similarity(FILE *f, const void *c)
{
    return analyze_similarity(f, ((const profiles *)c)->sim, 0, CLI_TEXT);
}
static int t_roofline(FILE *f, const void *c)
{
    const profiles *x = c;
    return analyze_roofline_print(f, x->roof, CLI_TEXT, x->top);
}
static int t_scaling(FILE *f, const void *c)
{
    const profiles *x = c;
    return analyze_scaling_print(f, x->scaling, CLI_TEXT, x->top);
}
static int t_parallelism(FILE *f, const void *c)
{
    return analyze_parallelism_print(f, ((const profiles *)c)->par, CLI_TEXT);
}
static int t_ranks(FILE *f, const void *c) { return analyze_ranks_print(f, ((const profiles *)c)->ranks, CLI_TEXT); }
static int t_gpu(FILE *f, const void *c) { return analyze_gpu_print(f, ((const profiles *)c)->gpu, CLI_TEXT); }
static int t_memory(FILE *f, const void *c)
{
    const profiles *x = c;
    return analyze_memory_print(f, x->p, x->n, CLI_TEXT);
}

static void section(FILE *f, const char *id, const char *title, const char *what)
{
    fprintf(f, "<h2 id=\"%s\">%s</h2>\n<p>", id, title);
    analyze_out_xml(f, what);
    fputs("</p>\n", f);
}

/* A chart into the page: an SVG inline (its text searchable, its marks'
 * titles shown on hover), its ids prefixed with its name so that charts
 * do not share them; a PNG as <img>.  0, or -1 when the SVG cannot be read. */
static int chart(FILE *f, const char *dir, const char *name, const char *alt)
{
    const char *dot = strrchr(name, '.');
    if (!dot || strcmp(dot, ".svg") != 0) {
        fprintf(f, "<figure><img src=\"%s\" alt=\"", name);
        analyze_out_xml(f, alt);
        fputs("\"></figure>\n", f);
        return 0;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *in = fopen(path, "r");
    if (!in)
        return -1;
    char *doc = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&doc, &len);
    if (!m) {
        fclose(in);
        return -1;
    }
    char buf[8192];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, k, m);
    int bad = ferror(in);
    fclose(in);
    if (fclose(m) != 0 || bad) {
        free(doc);
        return -1;
    }
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%.*s-", (int)(dot - name), name);
    const char *p = strstr(doc, "<svg");
    if (!p) {
        free(doc);
        return -1;
    }
    fputs("<figure role=\"img\" aria-label=\"", f);
    analyze_out_xml(f, alt);
    fputs("\">\n", f);
    static const char *const refs[] = { "id=\"", "url(#", "href=\"#" };
    while (*p) {
        size_t r = 0;
        while (r < 3 && strncmp(p, refs[r], strlen(refs[r])) != 0)
            r++;
        if (r < 3) {
            fputs(refs[r], f);
            fputs(prefix, f);
            p += strlen(refs[r]);
        } else {
            fputc(*p++, f);
        }
    }
    fputs("</figure>\n", f);
    free(doc);
    return 0;
}

static void traces_table(FILE *f, analyze_profile *const *p, size_t n)
{
    fputs("<table>\n<tr><th>trace</th><th>model</th><th>mode</th><th>preset</th><th>batch</th><th>threads</th>"
          "<th>steps kept</th><th>step (ms)</th><th>ops recorded</th><th>CPU</th></tr>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const analyze_meta *m = &p[i]->meta;
        fputs("<tr><td>", f);
        analyze_out_xml(f, p[i]->source);
        fputs("</td><td>", f);
        analyze_out_xml(f, analyze_profile_model(p[i]));
        fputs("</td><td>", f);
        analyze_out_xml(f, analyze_profile_mode(p[i]));
        fputs("</td><td>", f);
        analyze_out_xml(f, analyze_out_or_unknown(m->preset));
        if (m->have_begin)
            fprintf(f, "</td><td>%u</td><td>%u", m->batch, m->threads);
        else
            fputs("</td><td>?</td><td>?", f);
        fprintf(f, "</td><td>%llu</td><td>%.3f</td><td>%llu</td><td>",
                (unsigned long long)analyze_profile_steps_kept(p[i]), analyze_step_ns(p[i]) / 1e6,
                (unsigned long long)p[i]->ops_seen);
        analyze_out_xml(f, analyze_out_or_unknown(m->cpu));
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static int same_run_kind(const analyze_profile *a, const analyze_profile *b)
{
    return strcmp(analyze_profile_model(a), analyze_profile_model(b)) == 0 &&
           strcmp(analyze_profile_mode(a), analyze_profile_mode(b)) == 0;
}

/* The scaling of each model and mode given at two thread counts or more
 * (at most MAX_SCALING; a set that scaling refuses, e.g. two traces at one
 * thread count, gets none).  Returns how many, or -1 on out of memory. */
static int scalings(analyze_profile *const *p, size_t n, analyze_scaling **out)
{
    int k = 0;
    analyze_profile **sub = base_malloc(n * sizeof *sub);
    if (!sub)
        return -1;
    for (size_t i = 0; i < n && k < MAX_SCALING; i++) {
        int first = 1;
        for (size_t j = 0; j < i && first; j++)
            first = !same_run_kind(p[j], p[i]);
        if (!first)
            continue;
        size_t m = 0;
        for (size_t j = i; j < n; j++)
            if (same_run_kind(p[j], p[i]))
                sub[m++] = p[j];
        /* traces that do not scale are left out */
        if (m >= 2 && analyze_scaling_create(sub, m, &out[k]) == ANALYZE_OK)
            k++;
    }
    base_free(sub);
    return k;
}

/* s with every character but [A-Za-z0-9] made '_' (names from a trace
 * going into a file name). */
static char *safe_name(char *s)
{
    for (char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
            *c = '_';
    return s;
}

/* "scaling-MODEL-MODE.EXT" */
static void scaling_name(char *buf, size_t len, const analyze_scaling *sc, const char *ext)
{
    char model[21], mode[11];
    snprintf(model, sizeof model, "%s", analyze_profile_model(sc->p[0]));
    snprintf(mode, sizeof mode, "%s", analyze_profile_mode(sc->p[0]));
    snprintf(buf, len, "scaling-%s-%s.%s", safe_name(model), safe_name(mode), ext);
}

/* The analyses behind the report's charts and tables, made once. */
typedef struct report {
    analyze_sim *sim;
    analyze_roofline *roof; /* NULL without the machine's ceilings */
    analyze_pair *pairs;    /* training/inference pairs, np of them */
    int *used;              /* analyze_pairs()'s scratch */
    int np, nsc;
    analyze_scaling *sc[MAX_SCALING]; /* nsc of them */
    analyze_parallelism *par;         /* NULL when no trace has a data flow */
    size_t nflow;                     /* the traces with a data flow (analyze_parallelism_has_flow) */
    analyze_ranks *ranks;             /* NULL unless the traces are ranks of one job */
    char ranks_why[512];              /* the ranks of several jobs: why no ranks section */
    analyze_gpu *gpu;                 /* NULL unless some trace has device activity */
} report;

static void report_free(report *r)
{
    analyze_sim_destroy(r->sim);
    analyze_roofline_destroy(r->roof);
    analyze_parallelism_destroy(r->par);
    analyze_ranks_destroy(r->ranks);
    analyze_gpu_destroy(r->gpu);
    for (int k = 0; k < r->nsc; k++)
        analyze_scaling_destroy(r->sc[k]);
    base_free(r->pairs);
    base_free(r->used);
}

/* Every analysis the report shows, into r (report_free() frees it, on an
 * error too). */
static analyze_status report_analyze(report *r, analyze_profile *const *p, size_t n, const analyze_html_opts *o)
{
    analyze_status rc;
    if (!(r->sim = analyze_sim_create(p, n, 0)))
        return analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
    if (o->peaks && (rc = analyze_roofline_create(p, n, o->peaks, &r->roof)))
        return rc;
    r->pairs = base_calloc(n, sizeof *r->pairs);
    r->used = base_calloc(n, sizeof *r->used);
    analyze_profile **sub = base_calloc(n, sizeof *sub); /* the traces one analysis takes */
    if (!r->pairs || !r->used || !sub) {
        rc = analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
        goto end;
    }
    r->np = analyze_pairs(p, n, 0, r->pairs, r->used);
    if (r->np < 0)
        r->np = 0; /* no training/inference pair: no compare section */
    if ((r->nsc = scalings(p, n, r->sc)) < 0) {
        r->nsc = 0;
        rc = analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
        goto end;
    }

    size_t nsub = 0;
    for (size_t i = 0; i < n; i++) /* a trace without a data flow has no parallelism: left out, said so */
        if (analyze_parallelism_has_flow(p[i]))
            sub[nsub++] = p[i];
    r->nflow = nsub;
    if (nsub && (rc = analyze_parallelism_create(sub, nsub, &r->par)))
        goto end;

    nsub = 0; /* the ranks of a distributed job */
    for (size_t i = 0; i < n; i++)
        if (p[i]->rank >= 0)
            sub[nsub++] = p[i];
    if (nsub >= 2 && (rc = analyze_ranks_create(sub, nsub, &r->ranks))) {
        if (rc != ANALYZE_ERR_INPUT)
            goto end;
        snprintf(r->ranks_why, sizeof r->ranks_why, "%s", base_errmsg());
    }
    if ((rc = analyze_gpu_create(p, n, &r->gpu)))
        goto end;
    if (!analyze_gpu_any(r->gpu)) { /* CPU traces: no GPU section */
        analyze_gpu_destroy(r->gpu);
        r->gpu = NULL;
    }
    rc = ANALYZE_OK;
end:
    base_free(sub);
    return rc;
}

/* A chart's file name: NAME.png or NAME.svg, as the options say. */
static const char *chart_name(char *buf, size_t len, const char *name, const analyze_html_opts *o)
{
    snprintf(buf, len, "%s.%s", name, o->png ? "png" : "svg");
    return buf;
}

/* The path of a chart file the caller draws, in the page's folder. */
static const char *chart_file(page *pg, const char *name, char *path, size_t len)
{
    char file_name[64];
    return file(pg, chart_name(file_name, sizeof file_name, name, pg->o), path, len);
}

/* Every chart of the report, as a file in the folder. */
static analyze_status report_charts(page *pg, const report *r, analyze_profile *const *p, size_t n)
{
    const analyze_html_opts *o = pg->o;
    char path[4200], name[64];
    analyze_status rc;
    if ((rc = analyze_plot_classes(chart_file(pg, "classes", path, sizeof path), p, n)))
        return rc;
    if ((rc = analyze_plot_optypes(chart_file(pg, "optypes", path, sizeof path), p, n, o->top)))
        return rc;
    if ((rc = analyze_plot_memory(chart_file(pg, "memory", path, sizeof path), p, n)))
        return rc;
    if (r->np && (rc = analyze_plot_compare(chart_file(pg, "compare", path, sizeof path), p, r->pairs, (size_t)r->np)))
        return rc;
    if (r->sim->n >= 2 && (rc = analyze_plot_similarity(chart_file(pg, "similarity", path, sizeof path), r->sim)))
        return rc;
    for (int k = 0; k < r->nsc; k++) {
        scaling_name(name, sizeof name, r->sc[k], o->png ? "png" : "svg");
        if ((rc = analyze_plot_scaling(file(pg, name, path, sizeof path), r->sc[k], o->top && o->top < 8 ? o->top : 8)))
            return rc;
    }
    if (r->roof && (rc = analyze_plot_roofline(chart_file(pg, "roofline", path, sizeof path), r->roof, o->top)))
        return rc;
    if (r->par && (rc = analyze_plot_parallelism(chart_file(pg, "parallelism", path, sizeof path), r->par)))
        return rc;
    if (r->ranks && (rc = analyze_plot_ranks(chart_file(pg, "ranks", path, sizeof path), r->ranks)))
        return rc;
    if (r->gpu && (rc = analyze_gpu_plot_idle(r->gpu, chart_file(pg, "gpu", path, sizeof path))))
        return rc;
    if (r->gpu && analyze_gpu_any_calls(r->gpu) &&
        (rc = analyze_gpu_plot_launches(r->gpu, chart_file(pg, "launches", path, sizeof path))))
        return rc;
    return ANALYZE_OK;
}

/* The page's head and its line of links to the sections present. */
static void page_head(FILE *f, const report *r, size_t n)
{
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>fathom report</title>\n"
          "<style>\nbody { font-family: sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; "
          "color: #222; }\n"
          "table { border-collapse: collapse; font-size: 90%; }\n"
          "td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }\n"
          "pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 85%; }\n"
          "figure { margin: 1em 0; overflow-x: auto; }\n"
          "figure svg, figure img { max-width: 100%; height: auto; }\n"
          "details { margin: 0.5em 0 1.5em; }\nsummary { cursor: pointer; color: #444; }\n"
          ".note { background: #fff6d6; border-left: 4px solid #e6a700; padding: 0.5em 0.8em; }\n"
          "</style>\n</head>\n<body>\n<h1>fathom report</h1>\n",
          f);
    fprintf(f,
            "<p>%zu trace%s, written %s by <code>fathom report</code>. Sections: "
            "<a href=\"#breakdown\">breakdown</a>, ",
            n, n == 1 ? "" : "s", when);
    if (r->np)
        fputs("<a href=\"#compare\">training vs inference</a>, ", f);
    if (r->sim->n >= 2)
        fputs("<a href=\"#similarity\">similarity</a>, ", f);
    if (r->nsc)
        fputs("<a href=\"#scaling\">scaling</a>, ", f);
    if (r->gpu)
        fputs("<a href=\"#gpu\">GPU</a>, ", f);
    if (r->ranks || r->ranks_why[0])
        fputs("<a href=\"#ranks\">ranks</a>, ", f);
    fputs("<a href=\"#parallelism\">parallelism</a>, <a href=\"#roofline\">roofline</a>, <a "
          "href=\"#memory\">memory</a>, <a href=\"#traces\">traces</a>. "
          "Hover over a mark of a chart for its value; each table is folded under its chart.</p>\n",
          f);
}

/* A section's chart, NAME.EXT in the folder, with its title. */
static int section_chart(FILE *f, const analyze_html_opts *o, const char *name, const char *title)
{
    char file_name[64];
    return chart(f, o->dir, chart_name(file_name, sizeof file_name, name, o), title);
}

/* The sections that some reports lack: training vs inference, similarity,
 * scaling, GPU, ranks.  Nonzero if one could not be written. */
static int page_optional_sections(FILE *f, const report *r, profiles *x, const analyze_html_opts *o)
{
    char name[64];
    int io = 0;
    if (r->np) {
        section(f, "compare", "Training vs inference", "fathom analyze compare: the pairs found by model name.");
        io |= section_chart(f, o, "compare", "training and inference step time");
        io |= pre(f, t_compare, x, "table: fathom analyze compare");
    }
    if (r->sim->n >= 2) {
        section(f, "similarity", "Similarity",
                "Cosine similarity of the op-type time vectors and their average-linkage clustering "
                "(fathom analyze similarity).");
        io |= section_chart(f, o, "similarity", "cosine similarity matrix and dendrogram");
        io |= pre(f, t_similarity, x, "table: fathom analyze similarity");
    }
    if (r->nsc) {
        section(f, "scaling", "Scaling with threads",
                "Each model given at several thread counts: the speedup of its op time and of its largest op types "
                "over the fewest threads, and an Amdahl fit (fathom analyze scaling).");
        for (int k = 0; k < r->nsc; k++) {
            scaling_name(name, sizeof name, r->sc[k], o->png ? "png" : "svg");
            io |= chart(f, o->dir, name, "speedup with threads");
            x->scaling = r->sc[k];
            io |= pre(f, t_scaling, x, "table: fathom analyze scaling");
        }
    }
    if (r->gpu) {
        section(f, "gpu", "GPU",
                "Each device of the GPU traces per kept step (fathom analyze gpu): the time some activity ran "
                "(busy), and what the idle time waited on: work launched but not started (between kernels), a "
                "host thread inside a synchronizing call (host sync), or nothing launched (waiting on the host). "
                "Then how the host launched the work: the kernels shorter than the call that launched them, "
                "which the host cannot keep up with, and the median delay from a launch call to its kernel's "
                "start.");
        io |= section_chart(f, o, "gpu", "each step: busy and the idle time's causes");
        if (analyze_gpu_any_calls(r->gpu))
            io |= section_chart(f, o, "launches", "kernel time: short kernels and the rest");
        else
            fputs("<p class=\"note\">No launch statistics: the archives hold no runtime calls (the traces had "
                  "none, or an older fathom imported them).</p>\n",
                  f);
        io |= pre(f, t_gpu, x, "table: fathom analyze gpu");
    }
    if (r->ranks) {
        section(f, "ranks", "Ranks",
                "The ranks of one distributed job side by side (fathom analyze ranks): each rank's mean step "
                "split into the time its GPUs ran something other than communication, ran communication kernels, "
                "and were idle; the table gives the slowest rank of each step (the stragglers).");
        io |= section_chart(f, o, "ranks", "each rank's step: busy, communication, idle");
        io |= pre(f, t_ranks, x, "table: fathom analyze ranks");
    } else if (r->ranks_why[0]) {
        fputs("<h2 id=\"ranks\">Ranks</h2>\n<p class=\"note\">No ranks in this report: ", f);
        analyze_out_xml(f, r->ranks_why);
        fputs(".</p>\n", f);
    }
    return io;
}

/* The page's sections, each a chart and its table folded under it.
 * Nonzero if one could not be written. */
static int page_sections(FILE *f, const report *r, analyze_profile *const *p, size_t n, const analyze_html_opts *o)
{
    profiles x = { p, n, o->top, r->pairs, (size_t)r->np, r->sim, r->roof, NULL, r->par, r->ranks, r->gpu };
    int io = 0;
    section(f, "breakdown", "Where the time goes",
            "Op time by class and by op type (fathom analyze breakdown); each trace's kept steps.");
    io |= section_chart(f, o, "classes", "op time by class");
    io |= section_chart(f, o, "optypes", "share of op time by op type");
    io |= pre(f, t_breakdown, &x, "table: fathom analyze breakdown");

    io |= page_optional_sections(f, r, &x, o);

    if (r->par) {
        char what[512];
        snprintf(what, sizeof what,
                 "The average parallelism of each trace's data-flow graph: per step, the op time over the time of "
                 "the critical path, the longest chain of ops each reading what the previous one wrote "
                 "(fathom analyze parallelism). 1.0 is a chain; above it, inter-op workers have work to do.%s",
                 r->nflow < n ? " Traces without a data flow (schema 1, or ops that name no tensors) are left out."
                              : "");
        section(f, "parallelism", "Parallelism", what);
        io |= section_chart(f, o, "parallelism", "op time and critical path per step");
        io |= pre(f, t_parallelism, &x, "table: fathom analyze parallelism");
    } else {
        fputs("<h2 id=\"parallelism\">Parallelism</h2>\n<p class=\"note\">No parallelism in this report: none "
              "of the traces carries a data flow (node_def's inputs and outputs, trace schema 2 or 3).</p>\n",
              f);
    }

    if (r->roof) {
        char what[512];
        snprintf(what, sizeof what,
                 "Each op type against the ceilings of the recording machine (fathom analyze roofline), %.1f GFLOP/s "
                 "and %.1f GB/s as given.",
                 o->peaks->gflops, o->peaks->gbs);
        section(f, "roofline", "Roofline", what);
        io |= section_chart(f, o, "roofline", "roofline");
        io |= pre(f, t_roofline, &x, "table: fathom analyze roofline");
    } else {
        fputs("<h2 id=\"roofline\">Roofline</h2>\n<p class=\"note\">No roofline in this report: it needs the "
              "ceilings of the machine that recorded the traces. Measure them there with <code>fathom peak "
              "--format json &gt; peak.json</code> and give <code>fathom report --peak peak.json</code> (or "
              "<code>--gflops G --gbs B</code>).</p>\n",
              f);
    }

    section(f, "memory", "Memory",
            "Tensor memory by role at each run's peak, as a share of that peak, and the peaks themselves on a log "
            "scale (fathom analyze memory).");
    io |= section_chart(f, o, "memory", "tensor memory at the peak by role");
    io |= pre(f, t_memory, &x, "table: fathom analyze memory");
    fputs("<h2 id=\"traces\">The traces</h2>\n<details><summary>table: the traces and their runs</summary>\n", f);
    traces_table(f, p, n);
    fputs("</details>\n", f);
    return io;
}

analyze_status analyze_html_write(analyze_profile *const *p, size_t n, const analyze_html_opts *o)
{
    page pg = { .o = o };
    report r = { 0 };
    char path[4200];
    analyze_status rc;
    FILE *f = NULL;
    if (!n)
        return analyze_fail(ANALYZE_ERR_INPUT, "report wants at least one trace");
    int fresh = fresh_dir(o->dir);
    if (fresh < 0)
        return ANALYZE_ERR_IO; /* base_errmsg() says why */
    if (fresh && mkdir(o->dir, 0777) != 0)
        return analyze_fail(ANALYZE_ERR_IO, "cannot create %s: %s", o->dir, strerror(errno));
    pg.made_dir = fresh;

    if ((rc = report_analyze(&r, p, n, o)) || (rc = report_charts(&pg, &r, p, n)))
        goto end;

    if (!(f = fopen(file(&pg, "index.html", path, sizeof path), "w"))) {
        rc = analyze_fail(ANALYZE_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        goto end;
    }
    page_head(f, &r, n);
    int io = page_sections(f, &r, p, n, o);
    fputs("</body>\n</html>\n", f);
    if (io || ferror(f)) {
        rc = analyze_fail(ANALYZE_ERR_IO, "cannot write %s", path);
        goto end;
    }
    if (fclose(f) != 0) {
        f = NULL;
        rc = analyze_fail(ANALYZE_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        goto end;
    }
    f = NULL;
    rc = ANALYZE_OK;
end:
    if (f)
        fclose(f);
    if (rc)
        cleanup(&pg);
    report_free(&r);
    return rc;
}
