/* metadata.h -- what a CTF trace is, from its metadata alone.
 *
 * Before any stream is decoded, the reader reads each CTF trace's
 * `metadata` file itself (plain TSDL, or the packetized form LTTng
 * writes) and scans its top-level blocks: the event classes' names, the
 * stream classes, the `env` block (tracer_name, domain, tracer_major and
 * tracer_minor).  A trace that declares no `fathom:` event class is not
 * one fathom reads, and is answered without decoding it: a multi-gigabyte
 * kernel trace gets its "no" in milliseconds, and no decoder ever spins
 * on it.  The scan is this file's own code, bounded by the metadata's
 * size: Babeltrace2 2.0.4 can crash or spin on corrupt CTF, and it never
 * runs in the process that owns the user's outputs. */
#ifndef FATHOM_TRACER_METADATA_H
#define FATHOM_TRACER_METADATA_H

#include "tracer/archive.h"
#include "tracer/tracer_status.h"

#include <stddef.h>

typedef enum tracer_ctf_kind {
    TRACER_CTF_UNKNOWN,  /* the scan could not tell (a damaged metadata): the decoder says why */
    TRACER_CTF_FATHOM,   /* declares event classes of the fathom provider that this fathom reads */
    TRACER_CTF_FOREIGN,  /* declares no fathom: event class (or is CTF 2) */
    TRACER_CTF_NEWSCHEMA /* declares fathom: event classes, none of a schema this fathom reads */
} tracer_ctf_kind;

typedef struct tracer_ctf_meta {
    tracer_ctf_kind kind;
    unsigned events;        /* event classes */
    unsigned fathom_events; /* of which fathom:* */
    unsigned stream_classes;
    unsigned streams; /* stream files beside the metadata */
    int ctf2;         /* CTF 2 (JSON fragments) */
    int packetized;
    long tracer_major, tracer_minor; /* -1 when absent */
    char tracer[64], domain[32];     /* env's tracer_name and domain ("" when absent) */
    char unknown_fathom[64];         /* NEWSCHEMA: the first fathom: name it declares */
} tracer_ctf_meta;

/* Scans the CTF trace in folder dir: 0, or -1 when its metadata cannot be
 * read (m->kind is then UNKNOWN). */
int tracer_ctf_meta_scan(const char *dir, tracer_ctf_meta *m);
/* What the trace is, for a message: "an LTTng kernel trace (lttng-modules
 * 2.13, 12 event classes, 8 streams)". */
void tracer_ctf_meta_describe(const tracer_ctf_meta *m, char *buf, size_t len);

/* Sets aside the CTF traces of t that are not fathom's
 * (tracer_trace_skip_ctf: a reader names them as skipped).  TRACER_OK while
 * a trace is left that may be fathom's; TRACER_ERR_INPUT, with "SOURCE:
 * not a fathom trace: ..." in base_errmsg(), when none is. */
tracer_status tracer_ctf_screen(tracer_trace *t, const char *source);

#endif
