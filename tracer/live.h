/* live.h -- live sessions on an lttng-relayd: a net:// URL taken apart,
 * whether the relay holds a session, and where a relay on this machine
 * stores one that ended (the relay keeps no ended session for viewers
 * that attach later: its trace is in the relay's --output folder). */
#ifndef FATHOM_TRACER_LIVE_H
#define FATHOM_TRACER_LIVE_H

#include "tracer/tracer_status.h"

#include <stddef.h>
#include <stdint.h>

/* net://HOST[:PORT][/host/HOSTNAME/SESSION] */
typedef struct tracer_live_url {
    char relay[512];   /* net://HOST[:PORT] */
    int port;          /* the live port (5344 when not given) */
    char host[256];    /* HOSTNAME ("" when the URL names no session) */
    char session[256]; /* SESSION ("" when the URL names none) */
} tracer_live_url;

/* 0, or -1 when url is not such a URL. */
int tracer_live_parse(const char *url, tracer_live_url *u);

/* 1 when session is a name `fathom record` made (fathom-PID-TIME-RANDOM:
 * a recording that began, at `when`, "YYYY-MM-DD HH:MM:SS UTC"); else 0. */
int tracer_live_default_name(const char *session, char *when, size_t len);

typedef struct tracer_live_session_info {
    uint64_t clients, streams;
} tracer_live_session_info;

/* Asks the relay whether it holds u's session: TRACER_OK and *found (with
 * info when not NULL), or a status and the message (the relay did not
 * answer). */
tracer_status tracer_live_find(const tracer_live_url *u, int *found, tracer_live_session_info *info);

/* Where an lttng-relayd on this machine (the one whose live port is u's)
 * stores u's session: 1 and the folder in out; 2 and the pattern where it
 * would be (none there); 0 when no such relay runs here. */
int tracer_live_stored(const tracer_live_url *u, char *out, size_t len);

#endif
