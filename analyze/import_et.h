/* import_et.h -- PyTorch execution traces (import_et.c) into the importer's
 * in-memory trace (import_trace.h), and the parts of import_pytorch.c that
 * both parsers use (interned strings, tensors, protos, records). */
#ifndef FATHOM_ANALYZE_IMPORT_ET_H
#define FATHOM_ANALYZE_IMPORT_ET_H

#include "analyze/import_trace.h"

#include <jansson.h>

/* ---- the execution trace parser (import_et.c) ---- */
typedef struct imp_et imp_et; /* the nodes read so far */

imp_et *imp_et_create(void);
void imp_et_destroy(imp_et *s);
/* The document's "schema" member. */
void imp_et_schema(imp_et *s, const json_t *v);
/* One element of `nodes` (the idx-th). 0, or -1 with a message. */
int imp_et_node(imp_trace *t, imp_et *s, const json_t *node, uint64_t idx);
/* The nodes read into t's records and steps. 0, or -1 with a message. */
int imp_et_finish(imp_trace *t, imp_et *s);

/* ---- shared with the profiler trace parser (import_pytorch.c) ---- */
imp_strtab *imp_strtab_create(void);
void imp_strtab_destroy(imp_strtab *s);
/* The id of str[0..len); *added says whether it is new. -1: out of memory. */
int64_t imp_intern(imp_strtab *s, const char *str, size_t len, int *added);
int imp_dtype_of(const char *s);
int imp_dtype_size(int dt);
/* A JSON shape or list of shapes into a: 0, -1 if it is none, -2 if absurd. */
int imp_arg_of(const json_t *dims, analyze_import_arg *a);
/* The tensor named key in keys: found, or made of dtype dt and shape a. */
int64_t imp_keyed_tensor(imp_trace *t, imp_strtab *keys, const char *key, size_t n, int dt,
                         const analyze_import_arg *a);
int imp_is_op_name(const char *n);
/* Microseconds (a JSON number) to ns; -1 if not a usable time. */
int64_t imp_us_to_ns(const json_t *v);
void imp_scalar_of_json(const json_t *v, const char *type, analyze_import_scalar *sc);
int64_t imp_add_proto(imp_trace *t, const char *name, int cls, const analyze_import_arg *in, const int64_t *in_id,
                      size_t nin, const analyze_import_arg *out, const int64_t *out_id, size_t nout,
                      const analyze_import_scalar *sc, size_t nsc, int es);
/* The proto of a linked op's device time: named as the op, of class cls
 * (a kernel proto's, ANALYZE_IMPORT_CLASS_COUNT + a device class). */
int64_t imp_device_proto(imp_trace *t, const char *name, int cls);
int64_t imp_node_of(imp_trace *t, uint32_t proto, int phase);
int64_t imp_track_of(imp_trace *t, const json_t *pid, const json_t *tid, int gpu);
int imp_add_rec(imp_trace *t, uint64_t b, uint64_t e, uint32_t track, uint32_t ref, int kind);
int imp_push_step(imp_trace *t, uint64_t b, uint64_t e, uint32_t num);

#endif
