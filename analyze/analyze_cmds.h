/* analyze_cmds.h -- `fathom analyze`, `fathom report` and `fathom export`:
 * the entry points the driver's subcommand table calls (driver/fathom.c). */
#ifndef FATHOM_ANALYZE_ANALYZE_CMDS_H
#define FATHOM_ANALYZE_ANALYZE_CMDS_H

int cmd_analyze(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif
