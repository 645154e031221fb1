/* models_cmds.h -- the subcommands models/ owns, for the driver's table. */
#ifndef FATHOM_MODELS_MODELS_CMDS_H
#define FATHOM_MODELS_MODELS_CMDS_H
int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
#endif
