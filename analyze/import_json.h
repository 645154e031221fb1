/* import_json.h -- reading one large JSON document element by element in
 * bounded memory: the importer walks the top-level object or array itself
 * and hands each element (one trace event, one graph node) to jansson.
 * Input may be plain or compressed (gzip, zstd, xz, bzip2: libarchive's raw
 * format detects it).  Memory: the largest single element, at most
 * ANALYZE_JSON_ELEMENT_MAX bytes, plus a read buffer. */
#ifndef FATHOM_ANALYZE_IMPORT_JSON_H
#define FATHOM_ANALYZE_IMPORT_JSON_H

#include <stddef.h>
#include <stdint.h>

#define ANALYZE_JSON_ELEMENT_MAX (64u << 20)

typedef struct analyze_json_in analyze_json_in;

/* NULL and a one-line message in base_errmsg() on failure. */
analyze_json_in *analyze_json_open(const char *path);
void analyze_json_close(analyze_json_in *j);

/* The next non-blank byte without consuming it; -1 at the end of the input,
 * -2 on a read error (message in base_errmsg()). */
int analyze_json_peek(analyze_json_in *j);
/* Consume one byte (after a peek). */
void analyze_json_skip(analyze_json_in *j);
/* The value starting at the next non-blank byte, whole in memory: *len
 * bytes at the returned pointer (valid until the next call).  NULL with a
 * message (truncated input, an element over the limit, a read error).  The
 * extent is found by bracket and string matching only; the caller parses
 * it (and so meets any syntax error inside). */
const char *analyze_json_value(analyze_json_in *j, size_t *len);
/* The input read but not consumed yet: *avail bytes (after a peek, at its
 * byte), for a parser that finds a value's end itself (then consumes it). */
const char *analyze_json_buffered(const analyze_json_in *j, size_t *avail);
/* Consume the value analyze_json_value returned. */
void analyze_json_consume(analyze_json_in *j, size_t len);
/* The member `key` (with its quotes: "\"ts\"") of the JSON object text
 * obj[0..len), a decimal number of microseconds, read exactly into
 * nanoseconds (a double loses them: 2^53 ns is 104 days since the epoch).
 * 0: *ns set; 1: a number in exponent notation (not read); -1: no such
 * member; -2: not a non-negative number below 9.2e18 ns. */
int analyze_json_us_to_ns(const char *obj, size_t len, const char *key, int64_t *ns);
/* The same for the value text p[0..end) itself (0, 1 or -2). */
int analyze_json_text_us_to_ns(const char *p, const char *end, int64_t *ns);
/* A copy of the JSON text v[0..len) where each integer outside strings
 * beyond 64 bits (above INT64_MAX or below INT64_MIN: NCCL's "Comms Id")
 * is a string instead, for a parser with 64-bit integers; its length in
 * *outlen, the integers quoted in *quoted.  NULL when out of memory. */
char *analyze_json_quote_big_ints(const char *v, size_t len, size_t *outlen, uint64_t *quoted);
/* Bytes of (decompressed) input consumed so far. */
uint64_t analyze_json_offset(const analyze_json_in *j);

#endif
