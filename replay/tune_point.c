/* tune_point.c -- a point of the tuner's knob space as flags of `fathom
 * run`, both ways (see tune.h: replay_tune_flags, replay_tune_point_parse). */
#include "replay/tune.h"

#include "base/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void replay_tune_flags(const replay_tune_knobs *k, int with_batch, char *buf, size_t len)
{
    int n = snprintf(buf, len, "--threads %d --inter %d --conv-algo %s --bind %s", k->threads, k->inter,
                     exec_conv_algo_name(k->conv_algo),
                     exec_bind_name(k->bind == EXEC_BIND_DEFAULT ? EXEC_BIND_NONE : k->bind));
    if (with_batch && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " --batch %d", k->batch);
}

/* One flag's value: an integer within its run option's bounds
 * (base/run_options.def), or a name that from_name knows. */
static const struct point_flag {
    const char *name;
    int run_opt; /* cli_run_option, or -1 */
    int (*from_name)(const char *);
} point_flags[] = {
    { "--threads", CLI_RUN_threads, NULL },
    { "--inter", CLI_RUN_inter, NULL },
    { "--conv-algo", -1, exec_conv_algo_from_name },
    { "--bind", -1, exec_bind_from_name },
    { "--batch", CLI_RUN_batch, NULL },
};

exec_status replay_tune_point_parse(const char *flags, replay_tune_knobs *k)
{
    memset(k, 0, sizeof *k);
    char buf[512];
    if (!flags || strlen(flags) >= sizeof buf)
        return exec_fail(EXEC_ERR_ARG,
                         "settings to compare must be flags of fathom run, as '--threads 2 --bind close'");
    snprintf(buf, sizeof buf, "%s", flags);
    enum { NFLAGS = sizeof point_flags / sizeof point_flags[0] };
    _Static_assert(NFLAGS == 5, "a flag for each of replay_tune_knobs' fields");
    int val_of[NFLAGS] = { 0 }, named = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *val = strchr(tok, '=');
        if (val)
            *val++ = 0;
        int f = 0;
        while (f < NFLAGS && strcmp(tok, point_flags[f].name) != 0)
            f++;
        if (f == NFLAGS)
            return exec_fail(EXEC_ERR_ARG,
                             "unknown setting '%s' in '%s' (use --threads, --inter, --conv-algo, --bind, --batch)", tok,
                             flags);
        if (!val)
            val = strtok_r(NULL, " \t", &save);
        if (!val || !*val)
            return exec_fail(EXEC_ERR_ARG, "%s needs a value in '%s'", tok, flags);
        const struct point_flag *pf = &point_flags[f];
        int v;
        if (pf->from_name) {
            if ((v = pf->from_name(val)) < 0)
                return exec_fail(EXEC_ERR_ARG, "%s: unknown value '%s' in '%s'", tok, val, flags);
        } else {
            const cli_run_bounds *b = &cli_run_options[pf->run_opt];
            char *e;
            long l = strtol(val, &e, 10);
            if (*e || e == val || l < b->lo || l > b->hi)
                return exec_fail(EXEC_ERR_ARG, "%s wants a number from %ld to %ld, not '%s'", tok, b->lo, b->hi, val);
            v = (int)l;
        }
        val_of[f] = v;
        named++;
    }
    if (!named)
        return exec_fail(EXEC_ERR_ARG, "no settings in '%s' (flags of fathom run, as '--threads 2 --bind close')",
                         flags);
    k->threads = val_of[0], k->inter = val_of[1], k->conv_algo = (exec_conv_algo)val_of[2];
    k->bind = (exec_bind)val_of[3], k->batch = val_of[4];
    return EXEC_OK;
}
