/* cmd.h -- the tracer's `fathom` subcommands (tracer/cmd_*.c). */
#ifndef FATHOM_TRACER_CMD_H
#define FATHOM_TRACER_CMD_H
int cmd_record(int argc, char **argv);
int cmd_info(int argc, char **argv);
#endif
