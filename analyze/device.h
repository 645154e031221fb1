/* device.h -- a GPU trace's device activity (kernels, copies, fills), apart
 * from its host ops: per device, the kernel time, the time some activity
 * ran (the union of all its streams' spans), the idle time between the
 * first and the last activity, and the time by class and by kernel.
 *
 * An imported trace marks device activity by its nodes' class label:
 * "device.<class>" (device_classes.def), on threads of their own (one per
 * stream); its MANIFEST's `device.streams` names each stream's device. */
#ifndef FATHOM_ANALYZE_DEVICE_H
#define FATHOM_ANALYZE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#define ANALYZE_DEVICE_PREFIX "device."

typedef enum analyze_device_class {
#define DEVICE_CLASS(id) ANALYZE_DEVICE_##id,
#include "analyze/device_classes.def"
#undef DEVICE_CLASS
    ANALYZE_DEVICE_NCLASS
} analyze_device_class;

/* "gemm" ("?" out of range) and its label in a trace, "device.gemm". */
const char *analyze_device_class_name(int c);
const char *analyze_device_class_label(int c);
/* The class of a kernel's name and Kineto category (NULL: unknown). */
analyze_device_class analyze_device_class_of(const char *name, const char *cat);
/* The class of a trace's class label; -1 when it is not a device label. */
int analyze_device_class_parse(const char *label);

/* The kinds of a GPU trace's runtime calls, in the order of tracer/decode.h's
 * tracer_call_kind (the archive's values, fathom-trace(5) runtime). */
typedef enum analyze_call_kind {
    ANALYZE_CALL_launch,
    ANALYZE_CALL_sync,
    ANALYZE_CALL_memcpy,
    ANALYZE_CALL_other,
    ANALYZE_CALL_NKIND
} analyze_call_kind;
/* The kind of a runtime call by its name (device_classes.def, RUNTIME_CALL). */
analyze_call_kind analyze_call_kind_of(const char *name);
const char *analyze_call_kind_name(int k);

typedef struct analyze_device_kernel {
    const char *name; /* the collector's: valid while it lives */
    int cls;
    uint64_t ns, count;
} analyze_device_kernel;

typedef struct analyze_device {
    char name[48];      /* "cuda:0" */
    uint64_t streams;   /* streams with activity */
    uint64_t kernel_ns; /* sum of the kernels' durations (copies and fills apart) */
    uint64_t busy_ns;   /* union of all activity */
    uint64_t span_ns;   /* first activity's begin to last one's end */
    uint64_t idle_ns;   /* span_ns - busy_ns */
    uint64_t count;     /* activities */
    uint64_t class_ns[ANALYZE_DEVICE_NCLASS], class_count[ANALYZE_DEVICE_NCLASS];
    size_t nkernels;
    analyze_device_kernel *kernels; /* by time, descending */
} analyze_device;

typedef struct analyze_devices analyze_devices;

analyze_devices *analyze_devices_create(void);
void analyze_devices_destroy(analyze_devices *d);
/* The number of a kernel (name, class), added on first sight; -1 out of memory. */
int analyze_devices_kernel(analyze_devices *d, const char *name, int cls);
/* One activity of kernel k on stream (a thread id) from b to e ns, of
 * launch number launch (0: none, fathom-trace(5)'s ops.launches), launched
 * by runtime call number call (0: none, ops.calls); 0 or -1. */
int analyze_devices_add(analyze_devices *d, uint64_t stream, int k, uint64_t b, uint64_t e, uint64_t launch,
                        uint64_t call);
/* A runtime call of a host thread (fathom-trace(5), runtime): its number,
 * kind (analyze_call_kind) and span; 0 or -1 (out of memory). */
int analyze_devices_call(analyze_devices *d, uint64_t id, int kind, uint64_t b, uint64_t e);
/* Whether the trace holds its runtime calls (an archive older than them
 * does not: the idle split and the launch statistics are unknown). */
int analyze_devices_has_calls(const analyze_devices *d);
/* The host op of launch number launch (not 0) is of op type op (the
 * profile's); the first one named wins.  0 or -1 (out of memory). */
int analyze_devices_launcher(analyze_devices *d, uint64_t launch, int op);
/* Per op type (nops of them): the time and the number of the device
 * activities that its ops launched, into ns[] and count[] (zeroed first);
 * *un_ns and *un_count: the activities no host op launched (no launch
 * number, or one no host op carries: CUDA graph replays outside any op). */
void analyze_devices_by_op(const analyze_devices *d, size_t nops, uint64_t *ns, uint64_t *count, uint64_t *un_ns,
                           uint64_t *un_count);
/* A device's activity within a window of time (a step): what ran, and how
 * much of its communication ran while compute kernels did. */
typedef struct analyze_device_window {
    uint64_t b, e;            /* the window; both 0: from the device's first activity to its last */
    uint64_t busy_ns;         /* the union of all its activity, within the window */
    uint64_t comm_ns;         /* its communication kernels' time, within the window */
    uint64_t comm_overlap_ns; /* of that, the time some compute kernel ran too (any stream) */
    /* The idle time (the window less busy_ns), each instant of it once, in
     * this order: between kernels (some activity of the device launched,
     * its call begun, but not started), sync (a host thread inside a
     * synchronizing call), waiting on the host (the rest).  Zero when the
     * trace has no runtime calls (analyze_devices_has_calls). */
    uint64_t idle_between_ns, idle_sync_ns, idle_host_ns;
} analyze_device_window;

/* Device `name`'s activity within each window w[0..n); compute kernels are
 * those of every class but communication, memcpy and memset.  0, or -1
 * out of memory. */
int analyze_devices_windows(const analyze_devices *d, const char *name, analyze_device_window *w, size_t n);

/* How a device's activities beginning in the windows w[0..n) (set by
 * analyze_devices_windows: sorted, disjoint) were launched: each paired
 * with its runtime call by the call's number. */
#define ANALYZE_DEVICE_SHORT_TOP 5
typedef struct analyze_device_launches {
    uint64_t activities;         /* in the windows */
    uint64_t launched, unpaired; /* with their call; without (no call, or one the trace lacks: a CUDA graph's) */
    uint64_t calls;              /* the calls that launched them */
    uint64_t call_ns;            /* those calls' time on the host */
    uint64_t launched_ns;        /* their activities' time on the device */
    uint64_t kernel_ns;          /* the kernels' time in the windows (copies and fills apart) */
    /* launch to start: per call, its first activity's begin less the
     * call's begin (0 when before it); median and p90 are the nearest
     * ranks (the ceil(q n)-th smallest) */
    uint64_t delay_median_ns, delay_p90_ns, delay_max_ns;
    /* kernels shorter than the call that launched them, the call's only
     * activity: the host spends longer launching them than they run */
    uint64_t short_count, short_ns;
    size_t nshort_top;
    analyze_device_kernel short_top[ANALYZE_DEVICE_SHORT_TOP]; /* by count, then time, then name */
} analyze_device_launches;
/* Device `name`'s launch statistics in each window w[0..n) into out[0..n),
 * and in all of them together into out[n] (only it names the short
 * kernels).  0, or -1 out of memory. */
int analyze_devices_launch_stats(const analyze_devices *d, const char *name, const analyze_device_window *w, size_t n,
                                 analyze_device_launches *out);

/* Whether the trace has device activity, or host ops that launched some. */
int analyze_devices_any(const analyze_devices *d);
/* Names the streams' devices from "TID=DEVICE/STREAM,..." (a MANIFEST's
 * device.streams); streams not named are of device "gpu". 0 or -1. */
int analyze_devices_name_streams(analyze_devices *d, const char *map);
/* Per device, by name: *n of them (0 with NULL when there is no activity);
 * NULL with *n 1 when out of memory. */
analyze_device *analyze_devices_summary(const analyze_devices *d, size_t *n);
void analyze_devices_summary_free(analyze_device *v, size_t n);

/* The time some activity ran, as disjoint spans in time order: of all
 * devices and streams of a trace, all classes or one. */
typedef struct analyze_device_union analyze_device_union;
/* cls -1: all activity, else that class's; NULL out of memory (d NULL:
 * an empty union). */
analyze_device_union *analyze_devices_union(const analyze_devices *d, int cls);
void analyze_device_union_destroy(analyze_device_union *u);
/* The union's time within [b, e]. */
uint64_t analyze_device_union_within(const analyze_device_union *u, uint64_t b, uint64_t e);
/* The first activity's begin and the last one's end; 0 when u is empty. */
int analyze_device_union_range(const analyze_device_union *u, uint64_t *b, uint64_t *e);

#endif
