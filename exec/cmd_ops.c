/* cmd_ops.c -- `fathom ops`: the op table. */
#include "base/cli.h"
#include "exec_cmds.h"
#include "exec.h"

#include <getopt.h>
#include <jansson.h>
#include <string.h>

static const char usage_text[] = "usage: fathom ops [--format text|csv|json]\n\n"
                                 "Lists every op of the engine's op table: its TensorFlow-style name, its\n"
                                 "Fathom class, its arity, whether it has a gradient rule, its attribute\n"
                                 "layout and its FLOP formula in words. One line per op in text and CSV.\n";

int cmd_ops(int argc, char **argv)
{
    static const struct option opts[] = { { "format", required_argument, 0, 'f' },
                                          { "help", no_argument, 0, 'h' },
                                          { 0, 0, 0, 0 } };
    int fmt = CLI_TEXT, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if ((fmt = cli_parse_format("ops", optarg, 1)) < 0)
                return 2;
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: return cli_usage_error("ops", "unknown option '%s'; see 'fathom ops --help'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("ops", "unexpected argument '%s'", argv[optind]);

    if (fmt == CLI_JSON) {
        json_t *arr = json_array();
        for (int i = 0; i < EXEC_OP_COUNT; i++) {
            const exec_op_info *o = &exec_op_table[i];
            json_array_append_new(arr, json_pack("{s:s, s:s, s:i, s:i, s:b, s:s, s:s}", "op", o->name, "class",
                                                 exec_class_name(o->cls), "inputs", o->nin, "outputs", o->nout,
                                                 "gradient", o->grad != NULL, "attrs", o->attrs, "flops", o->flops));
        }
        json_t *root = json_pack("{s:i, s:o}", "schema", 1, "ops", arr);
        json_dumpf(root, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(root);
        return 0;
    }
    if (fmt == CLI_CSV)
        printf("op,class,inputs,outputs,gradient,attrs,flops\n");
    for (int i = 0; i < EXEC_OP_COUNT; i++) {
        const exec_op_info *o = &exec_op_table[i];
        char nin[8], nout[8];
        snprintf(nin, sizeof nin, "%d", o->nin);
        snprintf(nout, sizeof nout, "%d", o->nout);
        if (o->nin < 0)
            strcpy(nin, "n");
        if (o->nout < 0)
            strcpy(nout, "n");
        if (fmt == CLI_CSV)
            printf("%s,%s,%s,%s,%s,\"%s\",\"%s\"\n", o->name, exec_class_name(o->cls), nin, nout,
                   o->grad ? "yes" : "no", o->attrs, o->flops);
        else
            printf("%-38s %-13s %2s->%-2s grad:%-3s  flops: %-26s attrs: %s\n", o->name, exec_class_name(o->cls), nin,
                   nout, o->grad ? "yes" : "no", o->flops, *o->attrs ? o->attrs : "-");
    }
    return 0;
}
