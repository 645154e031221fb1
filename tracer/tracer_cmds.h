/* tracer_cmds.h -- the tracer's `fathom` subcommand (tracer/cmd_info.c). */
#ifndef FATHOM_TRACER_TRACER_CMDS_H
#define FATHOM_TRACER_TRACER_CMDS_H
int cmd_info(int argc, char **argv);
#endif
