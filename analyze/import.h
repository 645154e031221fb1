/* import.h -- `fathom import`: traces of other tools (PyTorch profiler
 * traces, PyTorch execution traces) turned into schema-2 fathom traces
 * (docs/design.md, "Imported traces").
 *
 *   import_map.c      the op table (import_ops.def): framework op name ->
 *                     class, engine op, FLOP/byte formula over shapes
 *   import_json.c     a bounded-memory reader of one large JSON document,
 *                     element by element (plain, gzip, zstd, xz input)
 *   import_scan.c     the fast path: one profiler event scanned in place,
 *                     no tree (jansson reads what it leaves)
 *   import_pytorch.c  the profiler trace parser into one in-memory trace
 *                     model, and the Babeltrace2 source `src.fathom.pytorch`
 *                     that emits it as schema-2 messages
 *   import_et.c       the execution trace parser into the same model
 *   cmd_import.c      `fathom import`: that source -> sink.ctf.fs -> archive
 */
#ifndef FATHOM_ANALYZE_IMPORT_H
#define FATHOM_ANALYZE_IMPORT_H

#include <babeltrace2/babeltrace.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the op table ----------------------------------------------------- */

/* The classes of imported ops: Fathom's seven, in the engine's order
 * (exec/op_class.def), and `other` for names the table does not know. */
typedef enum analyze_import_class {
    ANALYZE_IMPORT_ELEMENTWISE,
    ANALYZE_IMPORT_MATRIX,
    ANALYZE_IMPORT_REDUCTION,
    ANALYZE_IMPORT_CONVOLUTION,
    ANALYZE_IMPORT_RANDOM,
    ANALYZE_IMPORT_OPTIMIZATION,
    ANALYZE_IMPORT_DATA_MOVEMENT,
    ANALYZE_IMPORT_OTHER,
    ANALYZE_IMPORT_CLASS_COUNT
} analyze_import_class;

const char *analyze_import_class_name(analyze_import_class c);

/* The cost formulas of import_ops.def's COST column. */
typedef enum analyze_import_cost {
#define C(name) ANALYZE_IMPORT_COST_##name,
#include "tracer/import_costs.def"
#undef C
    ANALYZE_IMPORT_COST_COUNT
} analyze_import_cost;

/* How an op's scalar arguments become its node's attrs (import_ops.def's
 * ATTRS column): in the layout of the engine op. */
typedef enum analyze_import_attrs {
    ANALYZE_IMPORT_ATTRS_NONE,
    ANALYZE_IMPORT_ATTRS_MM,
    ANALYZE_IMPORT_ATTRS_MM_TB,
    ANALYZE_IMPORT_ATTRS_CONV,
    ANALYZE_IMPORT_ATTRS_CONV_BWD,
    ANALYZE_IMPORT_ATTRS_POOL,
    ANALYZE_IMPORT_ATTRS_POOL_BWD,
} analyze_import_attrs;

typedef struct analyze_import_op {
    const char *name; /* the framework's name: "aten::conv2d" */
    analyze_import_class cls;
    const char *engine; /* the engine's op(s), "" when it has none */
    analyze_import_cost cost;
    analyze_import_attrs attrs;
} analyze_import_op;

/* The table entry of a framework op name, or NULL. */
const analyze_import_op *analyze_import_lookup(const char *name);
/* The name an op type goes by when an imported trace is compared with a
 * fathom trace (`analyze diff IMPORTED REPLAY`): a framework op (framework
 * 1) by its engine op, or by the table's "A,B" where the framework fuses two
 * engine ops (a convolution's backward); an engine op (framework 0) by the
 * fused pair it is part of. Any other name as it is. The result is name or
 * a string of the table. */
const char *analyze_import_diff_label(const char *name, int framework);
/* Number of entries, and entry i (for tests and listings). */
size_t analyze_import_op_count(void);
const analyze_import_op *analyze_import_op_at(size_t i);

/* The class of a GPU kernel or memory operation, from its name. */
analyze_import_class analyze_import_kernel_class(const char *name);

/* One argument of a recorded op: a tensor (ndim dims), a list of tensors
 * (numel sums them; dims are the first's), or nothing known (numel 0). */
#define ANALYZE_IMPORT_MAX_DIMS 8
typedef struct analyze_import_arg {
    int ndim;
    int64_t d[ANALYZE_IMPORT_MAX_DIMS];
    uint64_t numel;
    int is_list;
} analyze_import_arg;

/* FLOPs and ideal bytes of formula `cost` over the op's arguments (outputs
 * may be none: formulas then estimate the output from the inputs; a
 * convolution's output is then taken to keep the input's spatial size).
 * esize: bytes per element.  Unknown shapes give 0 and 0. */
void analyze_import_cost_of(analyze_import_cost cost, const analyze_import_arg *in, size_t nin,
                            const analyze_import_arg *out, size_t nout, uint32_t esize, uint64_t *flops,
                            uint64_t *bytes);

/* One argument of a recorded op as integers: an int (n 1), a list of ints
 * (n of them, at most 4 kept), or anything else (n -1). */
typedef struct analyze_import_scalar {
    int n;
    int64_t v[4];
} analyze_import_scalar;

#define ANALYZE_IMPORT_MAX_ATTRS 8
/* The attrs of `kind` from the op's arguments (all of them, by position)
 * into attrs[ANALYZE_IMPORT_MAX_ATTRS]: their number, 0 when the arguments
 * do not give them. */
size_t analyze_import_attrs_of(analyze_import_attrs kind, const analyze_import_scalar *args, size_t nargs,
                               int64_t *attrs);

/* ---- the source component class (src.fathom.pytorch) ------------------ */

/* Its methods, registered by the plugin (plugin.c) and by `fathom import`,
 * which builds the same class in process (analyze_import_source_class). */
bt_component_class_initialize_method_status analyze_import_init(bt_self_component_source *self,
                                                                bt_self_component_source_configuration *config,
                                                                const bt_value *params, void *init_data);
void analyze_import_finalize(bt_self_component_source *self);
bt_message_iterator_class_initialize_method_status
analyze_import_iter_init(bt_self_message_iterator *it, bt_self_message_iterator_configuration *config,
                         bt_self_component_port_output *port);
void analyze_import_iter_finalize(bt_self_message_iterator *it);
bt_message_iterator_class_next_method_status
analyze_import_iter_next(bt_self_message_iterator *it, bt_message_array_const msgs, uint64_t capacity, uint64_t *count);

#define ANALYZE_IMPORT_SOURCE_NAME "pytorch"
#define ANALYZE_IMPORT_SOURCE_DESC "PyTorch profiler traces and execution traces as schema-2 fathom traces"
#define ANALYZE_IMPORT_SOURCE_HELP                                                                       \
    "Parameters: inputs=[PATH...] (Kineto or autograd-profiler Chrome-trace JSON, plain or gzip; or an " \
    "execution trace JSON), model=NAME (default: the file's name). One output port per input. "          \
    "See fathom-import(1)."

/* A new reference to the class, built in process; NULL when out of memory. */
bt_component_class_source *analyze_import_source_class(void);

/* What an import read, for the MANIFEST (filled by the component; the
 * command passes a pointer to one per input through init_data). */
typedef struct analyze_import_summary {
    char format[32]; /* "pytorch-profiler" or "pytorch-et" */
    uint64_t events; /* JSON events (or ET nodes) read */
    uint64_t ops, steps, nodes, tracks, tensors;
    uint64_t views;  /* execution traces: tensors that are views of another's storage */
    uint64_t linked; /* execution traces linked with a profiler trace: ops matched */
    uint64_t warnings;
    char model[128];
    char mode[8];
    char device[128];          /* the first GPU of deviceProperties, "" */
    uint64_t devices;          /* GPUs in deviceProperties */
    int64_t rank, world_size;  /* distributedInfo; world_size 0: none */
    char backend[32];          /* distributedInfo's backend ("nccl"), "" */
    char nccl_version[32];     /* distributedInfo's nccl_version, "" */
    int64_t pg_count;          /* distributedInfo's process groups (pg_count), 0: not said */
    char device_streams[4096]; /* each GPU stream's thread: "TID=cuda:0/7,..." (MANIFEST device.streams) */
} analyze_import_summary;

int cmd_import(int argc, char **argv);

#endif
