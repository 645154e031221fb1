/* cmd.h -- the engine's `fathom` subcommands (exec/cmd_ops.c, exec/cmd_peak.c). */
#ifndef FATHOM_EXEC_CMD_H
#define FATHOM_EXEC_CMD_H
int cmd_ops(int argc, char **argv);
int cmd_peak(int argc, char **argv);
#endif
