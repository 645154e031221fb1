/* schema_dump.c -- prints the rows of tracer/schema.def as the test
 * schema_table compares them with the traces each writer makes: one line a
 * field, "fathom:EVENT NAME TYPE", TYPE as u32, s64, double, string,
 * enum u8 or array u32 (a sequence of u32 elements); a row that only
 * `fathom import` writes, where the trace has it, ends in " (import)".
 *
 * usage: schema_dump [1|2]   (the events of that schema version; all without) */
#include "tracer/schema.def"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum row_kind { ROW_SCHEMA, ROW_INT, ROW_FLOAT, ROW_STRING, ROW_ENUM, ROW_SEQ };
typedef struct row {
    const char *name;
    enum row_kind kind;
    int bits;
    int sign;
    int imported;
} row;

#define ROW(x, group, name, kind, ctype, src, len, need) \
    { #name, ROW_##kind, (int)sizeof(ctype) * 8, !((ctype)-1 > 0), ROW_IMPORTED_##group },
#define ROW_IMPORTED_run 0
#define ROW_IMPORTED_ev 0
#define ROW_IMPORTED_import 1
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
            case ROW_SCHEMA:
            case ROW_INT: printf("%s", num); break;
            case ROW_FLOAT: printf("double"); break;
            case ROW_STRING: printf("string"); break;
            case ROW_ENUM: printf("enum %s", num); break;
            case ROW_SEQ: printf("array %s", num); break;
            }
            printf("%s\n", r->imported ? " (import)" : "");
        }
    }
    return 0;
}
