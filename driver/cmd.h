/* cmd.h -- the driver's own subcommand: `fathom record` runs a workload
 * (models/) under the recorder (tracer/), the one command that needs both. */
#ifndef FATHOM_DRIVER_CMD_H
#define FATHOM_DRIVER_CMD_H
int cmd_record(int argc, char **argv);
#endif
