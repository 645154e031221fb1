/* fields.h -- reading Babeltrace2 fields the way every fathom trace reader
 * does (the sink behind the analyses, the exporter): integers of any
 * integer/enum/bool type, names from enum labels or strings, struct members
 * by name.  Part of the one trace reader (tracer/reader.h). */
#ifndef FATHOM_TRACER_FIELDS_H
#define FATHOM_TRACER_FIELDS_H

#include <babeltrace2/babeltrace.h>
#include <stddef.h>
#include <stdint.h>

/* The value of an integer, enumeration or bool field into *out: 0, or -1
 * when f is NULL or of another type. */
int tracer_field_u64(const bt_field *f, uint64_t *out);
/* tracer_field_u64(), or dflt. */
uint64_t tracer_field_u64_or(const bt_field *f, uint64_t dflt);
/* A name for an enum/string/integer field: the (first) enum label, the
 * string, or "#VALUE" when the value has no label (in buf).  NULL if f is
 * NULL or of another type. A label or string with a control byte comes as
 * its copy in buf, each one '?' (base_printable): the trace's. */
const char *tracer_field_label(const bt_field *f, char *buf, size_t len);
/* Member `name` of a structure field, or NULL (f NULL, not a structure, or
 * no such member). */
const bt_field *tracer_field_member(const bt_field *f, const char *name);

#endif
