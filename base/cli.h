/* cli.h -- what every `fathom` subcommand shares: its entry point and the
 * output-format option. Each subcommand lives in the folder that owns it. */
#ifndef FATHOM_CLI_H
#define FATHOM_CLI_H
#include <stdio.h>

typedef int (*cli_main_fn)(int argc, char **argv);

typedef enum cli_format { CLI_TEXT, CLI_CSV, CLI_JSON } cli_format;
/* "text", "json" or (allow_csv) "csv" as a format; -1 for anything else
 * (NULL too), silently. */
int cli_format_from(const char *s, int allow_csv);
/* Parses "text", "csv" or "json"; returns -1 (after printing an error naming
 * the command) for anything else or a format the command does not offer. */
int cli_parse_format(const char *cmd, const char *arg, int allow_csv);
/* Prints "fathom CMD: message" to stderr; returns 2 (usage) for chaining. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "fathom CMD: message" to stderr; returns 1. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses an integer option value in [min, max] (plain decimal: no spaces,
 * no '+', no overflow), printing an error naming opt if it is not one. */
int cli_parse_int(const char *cmd, const char *opt, const char *arg, long min, long max, long *out);
/* The same for an unsigned 64-bit value (seeds). */
int cli_parse_u64(const char *cmd, const char *opt, const char *arg, unsigned long long *out);

/* The numeric flags of a run shared by run, record, replay and tune, one
 * row each in run_options.def: CLI_RUN_threads, CLI_RUN_inter, ... */
typedef enum cli_run_option {
#define X(name, flag, lo, hi) CLI_RUN_##name,
#include "base/run_options.def"
#undef X
    CLI_RUN_COUNT
} cli_run_option;
typedef struct cli_run_bounds {
    const char *flag; /* "--threads" */
    long lo, hi;
} cli_run_bounds;
extern const cli_run_bounds cli_run_options[CLI_RUN_COUNT];
/* cli_parse_int with the flag's name and bounds from its row. */
int cli_parse_run_option(const char *cmd, cli_run_option o, const char *arg, long *out);
#endif
