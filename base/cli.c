/* cli.c -- helpers shared by the subcommands. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_format_from(const char *s, int allow_csv)
{
    if (!s)
        return -1;
    if (strcmp(s, "text") == 0)
        return CLI_TEXT;
    if (strcmp(s, "json") == 0)
        return CLI_JSON;
    if (allow_csv && strcmp(s, "csv") == 0)
        return CLI_CSV;
    return -1;
}

int cli_parse_format(const char *cmd, const char *arg, int allow_csv)
{
    int f = cli_format_from(arg, allow_csv);
    if (f < 0)
        cli_usage_error(cmd, "unknown format '%s' (use text%s or json)", arg ? arg : "", allow_csv ? ", csv" : "");
    return f;
}

static void vreport(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "fathom%s%s: ", cmd && *cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, fmt, ap);
    va_end(ap);
    return 2;
}

int cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, fmt, ap);
    va_end(ap);
    return 1;
}

/* Plain decimal: an optional '-' (when allowed), then digits only; no
 * spaces, no '+', no base prefix (strtol alone would take " 5" and "+5"). */
static int plain_decimal(const char *arg, int allow_minus)
{
    const char *p = arg;
    if (allow_minus && *p == '-')
        p++;
    if (!*p)
        return 0;
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

int cli_parse_int(const char *cmd, const char *opt, const char *arg, long min, long max, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = plain_decimal(arg, 1) ? strtol(arg, &end, 10) : 0;
    if (!plain_decimal(arg, 1) || errno || !end || *end || end == arg || v < min || v > max) {
        cli_usage_error(cmd, "%s wants an integer in [%ld, %ld], not '%s'", opt, min, max, arg);
        return -1;
    }
    *out = v;
    return 0;
}

const cli_run_bounds cli_run_options[CLI_RUN_COUNT] = {
#define X(name, flag, lo, hi) [CLI_RUN_##name] = { flag, lo, hi },
#include "base/run_options.def"
#undef X
};

int cli_parse_run_option(const char *cmd, cli_run_option o, const char *arg, long *out)
{
    const cli_run_bounds *b = &cli_run_options[o];
    return cli_parse_int(cmd, b->flag, arg, b->lo, b->hi, out);
}

int cli_parse_u64(const char *cmd, const char *opt, const char *arg, unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = plain_decimal(arg, 0) ? strtoull(arg, &end, 10) : 0;
    if (!plain_decimal(arg, 0) || errno || !end || *end || end == arg) {
        cli_usage_error(cmd, "%s wants an unsigned integer below 2^64, not '%s'", opt, arg);
        return -1;
    }
    *out = v;
    return 0;
}
