/* cmd_analyze.h -- `fathom analyze`, `fathom report` and `fathom export`:
 * the entry points the driver's subcommand table calls (exec/main.c). */
#ifndef FATHOM_ANALYZE_CMD_H
#define FATHOM_ANALYZE_CMD_H

int cmd_analyze(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif
