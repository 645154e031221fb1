/* replay_cmds.h -- replay's `fathom` subcommand (replay/cmd_replay.c). */
#ifndef FATHOM_REPLAY_REPLAY_CMDS_H
#define FATHOM_REPLAY_REPLAY_CMDS_H
int cmd_replay(int argc, char **argv);
#endif
