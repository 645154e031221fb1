/* driver_cmds.h -- the driver's own subcommands, the two that combine floors:
 * `fathom record` runs a workload (models/) under the recorder (tracer/);
 * `fathom tune` tunes a workload (models/) or a trace with replay/'s tuner. */
#ifndef FATHOM_DRIVER_DRIVER_CMDS_H
#define FATHOM_DRIVER_DRIVER_CMDS_H
int cmd_record(int argc, char **argv);
int cmd_tune(int argc, char **argv);
#endif
