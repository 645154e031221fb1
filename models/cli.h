/* cli.h -- the subcommands models/ owns, for the driver's table. */
#ifndef FATHOM_MODELS_CLI_H
#define FATHOM_MODELS_CLI_H
int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
#endif
