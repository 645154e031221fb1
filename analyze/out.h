/* out.h -- the small output helpers every analysis shares (report.c,
 * roofline.c): JSON, CSV and text cells, labels, byte counts.  Internal to
 * analyze/. */
#ifndef FATHOM_ANALYZE_OUT_H
#define FATHOM_ANALYZE_OUT_H

#include "analyze/profile.h"
#include "analyze/analyze_status.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Dumps root (indented) and a newline, and drops the reference: 0 or -1
 * (root NULL: -1, for json_pack failures). */
int analyze_out_json(FILE *f, json_t *root);
/* A printer's 0 or -1 (analyze_out_json's, a report's) as the status the
 * analysis row's print returns: ANALYZE_OK; ANALYZE_ERR_IO where f is in
 * error; else ANALYZE_ERR_NOMEM (a JSON value that could not be built).
 * The message is set on failure. */
analyze_status analyze_out_status(FILE *f, int rc);
/* A JSON string, or null for NULL or "". */
json_t *analyze_out_jstr(const char *s);
/* A JSON real, or null when v is not finite. */
json_t *analyze_out_jreal(double v);

/* s with <, >, & and " escaped for HTML and XML text and attributes (NULL: nothing). */
void analyze_out_xml(FILE *f, const char *s);
/* A CSV field, quoted when it holds a comma, quote or newline. */
void analyze_out_csv_str(FILE *f, const char *s);
/* ",<v in fmt>", or "," alone when v is not finite. */
void analyze_out_csv_num(FILE *f, const char *fmt, double v);

/* A text column of width w widened to fit name. */
int analyze_out_width(int w, const char *name);
/* " <v with prec decimals>" right-aligned in w columns, or "-" when v is not finite. */
void analyze_out_text_real(FILE *f, int w, int prec, double v);
/* "model/mode" of p ("model/mode/rankN" for one rank of a job), in buf. */
const char *analyze_out_label(const analyze_profile *p, char *buf, size_t len);
/* "1.50 MiB" etc., in buf. */
const char *analyze_out_bytes(uint64_t b, char *buf, size_t len);
/* A list of distinct names, borrowed, in the order first added (the union
 * of several traces' op types, classes or roles).  Zero-initialized: empty. */
typedef struct analyze_names {
    const char **v;
    size_t n, cap;
} analyze_names;
/* Adds s unless it is there already: 0, or -1 on out of memory. */
int analyze_names_add(analyze_names *l, const char *s);
/* Where s is in l: its index, or l->n when it is not there. */
size_t analyze_names_index(const analyze_names *l, const char *s);
void analyze_names_free(analyze_names *l);

/* s, or "?" for NULL or "". */
const char *analyze_out_or_unknown(const char *s);

#endif
