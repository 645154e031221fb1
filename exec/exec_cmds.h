/* exec_cmds.h -- the engine's `fathom` subcommands (exec/cmd_ops.c, exec/cmd_peak.c). */
#ifndef FATHOM_EXEC_EXEC_CMDS_H
#define FATHOM_EXEC_EXEC_CMDS_H
int cmd_ops(int argc, char **argv);
int cmd_peak(int argc, char **argv);
#endif
