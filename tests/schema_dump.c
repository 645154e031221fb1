/* schema_dump.c -- prints the rows of tracer/schema.def as the test
 * schema_table compares them with the traces each writer makes: one line a
 * field, "fathom:EVENT NAME TYPE", TYPE as u32, s64, double, string,
 * enum u8 or array u32 (a sequence of u32 elements); a row that only
 * `fathom import` writes, where the trace has it, ends in " (import)", one
 * of schema 3 alone (the packed op records) in " (packed)".
 *
 * usage: schema_dump [1|2]   (the events of that schema version, 2 for 2 and 3; all without) */
#include "tracer/schema.def"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef fathom_schema_row row;
#define ROW FATHOM_SCHEMA_ROW
#define ROWS(event, schema) static const row rows_##event[] = { FATHOM_SCHEMA_##event(ROW, _) };
FATHOM_SCHEMA_EVENTS(ROWS)

#define EVENT(event, schema) { "fathom:" #event, schema, rows_##event, sizeof rows_##event / sizeof rows_##event[0] },
static const struct {
    const char *name;
    int schema;
    const row *rows;
    size_t n;
} events[] = { FATHOM_SCHEMA_EVENTS(EVENT) };

int main(int argc, char **argv)
{
    int only = argc > 1 ? atoi(argv[1]) : 0;
    for (size_t e = 0; e < sizeof events / sizeof events[0]; e++) {
        if (only && events[e].schema != only)
            continue;
        for (size_t i = 0; i < events[e].n; i++) {
            const row *r = &events[e].rows[i];
            char num[16];
            snprintf(num, sizeof num, "%c%d", r->sign ? 's' : 'u', r->bits);
            printf("%s %s ", events[e].name, r->name);
            switch (r->kind) {
            case FATHOM_SCHEMA_KIND_SCHEMA:
            case FATHOM_SCHEMA_KIND_INT: printf("%s", num); break;
            case FATHOM_SCHEMA_KIND_FLOAT: printf("double"); break;
            case FATHOM_SCHEMA_KIND_STRING: printf("string"); break;
            case FATHOM_SCHEMA_KIND_ENUM: printf("enum %s", num); break;
            case FATHOM_SCHEMA_KIND_SEQ: printf("array %s", num); break;
            }
            printf("%s\n", r->imported ? " (import)" : r->packed ? " (packed)" : "");
        }
    }
    return 0;
}
