/* analysis.h -- what every analysis is, and the table of them.
 *
 * An analysis has one shape: create from profiles (with the options it
 * takes) -> a result, or a status and a one-line message -> print the
 * result as text, CSV or JSON -> destroy.  Each lives in a file of its own
 * (breakdown.c, compare.c, similarity.c, diff.c, scaling.c, roofline.c,
 * memory.c, parallelism.c, ranks.c) that defines its row, an analyze_analysis; analyses.def lists
 * the rows.  `fathom analyze` (cmd_analyze.c) and the Babeltrace2 plugin's
 * sinks (plugin.c) are both driven by the table: adding an analysis is
 * adding its file and a row in analyses.def. */
#ifndef FATHOM_ANALYZE_ANALYSIS_H
#define FATHOM_ANALYZE_ANALYSIS_H

#include "analyze/profile.h"
#include "analyze/analyze_status.h"
#include "base/cli.h"

#include <stddef.h>
#include <stdio.h>

/* Analyses print in the output format every subcommand shares (cli_format
 * of base/cli.h: CLI_TEXT, CLI_CSV, CLI_JSON). */

struct analyze_peaks; /* roofline.h */

/* The options an analysis may take (which ones: its row's `takes`). */
enum {
    ANALYZE_TAKES_TOP = 1 << 0,    /* --top N / top=N: text rows of op types */
    ANALYZE_TAKES_BY = 1 << 1,     /* --by type|class / by=... */
    ANALYZE_TAKES_PAIRS = 1 << 2,  /* --pairs: the traces are TRAIN INFER ... in argument order */
    ANALYZE_TAKES_PEAKS = 1 << 3,  /* --peak FILE, --gflops X, --gbs Y (required) */
    ANALYZE_TAKES_LIVE = 1 << 4,   /* a live session read alone: its table so far at every interval */
    ANALYZE_TAKES_FLOW = 1 << 5,   /* profiles that follow the data flow (analyze_read_options.dataflow) */
    ANALYZE_TAKES_WINDOW = 1 << 6, /* --skip-first N, --skip-last N / skip-first=, skip-last=: the kept steps */
};

typedef struct analyze_options {
    size_t top;                        /* 0: every row */
    int by_class;                      /* similarity: classes rather than op types */
    int in_order;                      /* compare: pairs in argument order */
    const struct analyze_peaks *peaks; /* roofline: the ceilings */
} analyze_options;

/* A note for the reader of the command line (a trace left out, a trace
 * without kept steps): one line, no newline. */
typedef void (*analyze_note_fn)(void *ctx, const char *line);

typedef struct analyze_analysis {
    const char *name;              /* "breakdown": `fathom analyze NAME`, sink.fathom.NAME */
    const char *args;              /* its synopsis after the name: "[options] TRACE..." */
    const char *summary;           /* `fathom analyze --help`: lines of at most 62 columns */
    const char *about;             /* `fathom analyze NAME --help` */
    const char *options;           /* its own options' help lines ("" when none) */
    unsigned takes;                /* ANALYZE_TAKES_* */
    size_t min_traces, max_traces; /* max 0: no limit */
    const char *traces_rule;       /* "exactly two traces (...)" when min > 1; NULL otherwise */
    /* The result of the analysis of p[0..n-1] (borrowed: they outlive it)
     * into *out; or a status and its message (base_errmsg()).  Bad input:
     * ANALYZE_ERR_INPUT. */
    analyze_status (*create)(analyze_profile *const *p, size_t n, const analyze_options *o, void **out);
    /* Writes the result to f: ANALYZE_OK, or ANALYZE_ERR_IO (f could not be
     * written) or ANALYZE_ERR_NOMEM, and its message. */
    analyze_status (*print)(FILE *f, const void *result, cli_format fmt, const analyze_options *o);
    void (*destroy)(void *result);
    /* Optional: a one-line warning into buf, returning 1, when the traces
     * are not what the analysis expects of them (other models, machines). */
    int (*mismatch)(const void *result, char *buf, size_t len);
    /* Optional: the notes of the command line for format fmt. */
    void (*notes)(const void *result, cli_format fmt, analyze_note_fn fn, void *ctx);
} analyze_analysis;

/* The result of the analyses that print straight from the profiles
 * (breakdown, memory): the profiles, borrowed. */
typedef struct analyze_profile_set {
    analyze_profile *const *p;
    size_t n;
} analyze_profile_set;
/* A row's create for them (o is not read). */
analyze_status analyze_profile_set_create(analyze_profile *const *p, size_t n, const analyze_options *o, void **out);
void analyze_profile_set_destroy(void *set);

/* The table, in the order of `fathom analyze --help` (analyses.def). */
extern const analyze_analysis *const analyze_analyses[];
extern const size_t analyze_nanalyses;
/* The row named `name`, or NULL. */
const analyze_analysis *analyze_analysis_find(const char *name);

#endif
