/* cmd_list.c -- `fathom list`: the workloads, their papers and sizes. */
#include "base/cli.h"
#include "models/models_cmds.h"
#include "models/model.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] = "usage: fathom list [--format text|json]\n\n"
                                 "Lists the workloads: name, seminal paper, class of network, and per preset\n"
                                 "(tiny, small, full) the default batch and the parameter count, counted from\n"
                                 "the built graph. See fathom-list(1) and fathom-workloads(7).\n";

/* Parameters of a preset, from its graph built without planning. */
static int64_t params_of(const model_def *d, model_preset p)
{
    model_config cfg = { .mode = MODEL_INFER, .preset = p, .seed = 1, .plan = false };
    model *m = NULL;
    if (model_create(d, &cfg, &m))
        return -1;
    int64_t n = exec_param_count(m->g);
    model_destroy(m);
    return n;
}

int cmd_list(int argc, char **argv)
{
    int format = CLI_TEXT;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            if ((format = cli_parse_format("list", argv[++i], 0)) < 0)
                return 2;
        } else if (strncmp(argv[i], "--format=", 9) == 0) {
            if ((format = cli_parse_format("list", argv[i] + 9, 0)) < 0)
                return 2;
        } else if (strcmp(argv[i], "--format") == 0) {
            return cli_usage_error("list", "--format needs a value");
        } else {
            return cli_usage_error("list", "unexpected argument '%s'; see 'fathom list --help'", argv[i]);
        }
    }
    json_t *arr = format == CLI_JSON ? json_array() : NULL;
    if (format == CLI_TEXT)
        printf("%-11s %-28s %-30s %12s %12s %13s\n", "name", "paper", "class", "tiny", "small", "full");
    for (int i = 0; i < model_registry_count; i++) {
        const model_def *d = model_registry[i];
        int64_t n[MODEL_PRESET_COUNT];
        for (int p = 0; p < MODEL_PRESET_COUNT; p++)
            if ((n[p] = params_of(d, (model_preset)p)) < 0) {
                json_decref(arr);
                return cli_error("list", "%s (%s): %s", d->name, model_preset_name((model_preset)p), exec_errmsg());
            }
        if (arr) {
            json_t *presets = json_object();
            for (int p = 0; p < MODEL_PRESET_COUNT; p++)
                json_object_set_new(presets, model_preset_name((model_preset)p),
                                    json_pack("{s:i, s:I}", "batch", d->batch[p], "params", (json_int_t)n[p]));
            json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:o}", "name", d->name, "paper", d->paper,
                                                 "class", d->kind, "summary", d->summary, "presets", presets));
        } else {
            printf("%-11s %-28s %-30s %12lld %12lld %13lld\n", d->name, d->paper, d->kind, (long long)n[0],
                   (long long)n[1], (long long)n[2]);
        }
    }
    if (arr) {
        char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(arr);
        if (!s)
            return cli_error("list", "out of memory");
        printf("%s\n", s);
        free(s);
    } else {
        printf("\n(parameter counts per preset, from the built graphs; batches: fathom list --format json)\n");
    }
    return 0;
}
