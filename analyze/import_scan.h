/* import_scan.h -- the importer's fast path: one Chrome-trace event object
 * scanned in place, with no tree and no allocation.
 *
 * The scanner checks the whole element's syntax and hands back the text of
 * the members an event needs.  It accepts a subset of what jansson accepts,
 * the events of real traces: strings of printable ASCII without escapes,
 * integers of at most 18 digits, decimals without an exponent, nesting up to
 * ANALYZE_SCAN_DEPTH, each member it reports once.  Anything else (and any
 * syntax error) is left to jansson, which reads it as before and names the
 * error: both paths give one reading of any element. */
#ifndef FATHOM_ANALYZE_IMPORT_SCAN_H
#define FATHOM_ANALYZE_IMPORT_SCAN_H

#include <stddef.h>
#include <stdint.h>

#define ANALYZE_SCAN_DEPTH 32

/* The text of one value: p[0..n), a string with its quotes; p NULL when
 * the member is absent. */
typedef struct analyze_scan_text {
    const char *p;
    size_t n;
} analyze_scan_text;

/* The members of a trace event (top level) and of its "args" (when args is
 * an object). */
typedef struct analyze_scan_event {
    analyze_scan_text ph, name, cat, ts, dur, pid, tid, args;
    analyze_scan_text dims, types, concrete, ext; /* "Input Dims", "Input type", "Concrete Inputs", "External id" */
    analyze_scan_text corr;                       /* "correlation" */
} analyze_scan_event;

/* Scan the object at the start of s[0..avail) (the input buffered so
 * far): its length, *e filled; 0 when it is not one for the fast path or
 * does not end within avail. */
size_t analyze_scan_event_prefix(const char *s, size_t avail, analyze_scan_event *e);

/* Scan the element s[0..len).  0: an object, *e filled; 1: not one for the
 * fast path (not an object, a syntax error, or outside the subset). */
int analyze_scan_event_text(const char *s, size_t len, analyze_scan_event *e);

/* The end of the value at p (before end): the byte after it; NULL when it
 * is not a value of the subset.  depth: the nesting around it. */
const char *analyze_scan_value(const char *p, const char *end, int depth);

/* Whether the value text v is an integer token (an optional '-', digits);
 * its value in *x (the subset's integers fit in 64 bits). */
int analyze_scan_integer(analyze_scan_text v, int64_t *x);

#endif
