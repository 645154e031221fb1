/* cli.h -- what every `fathom` subcommand shares: its entry point and the
 * output-format option. Each subcommand lives in the folder that owns it. */
#ifndef FATHOM_CLI_H
#define FATHOM_CLI_H
#include <stdio.h>

typedef int (*cli_main_fn)(int argc, char **argv);

typedef enum cli_format { CLI_TEXT, CLI_CSV, CLI_JSON } cli_format;
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

int cmd_ops(int argc, char **argv);
int cmd_peak(int argc, char **argv);
int cmd_replay(int argc, char **argv);   /* replay/cmd_replay.c */
int cmd_tune(int argc, char **argv);     /* replay/cmd_tune.c */
#endif
