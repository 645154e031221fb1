/* fuzz_manifest -- the MANIFEST parser on any bytes.  Whatever parses must
 * serialize, parse back to the same entries (escaping is lossless) and go
 * through the typed-key checks; nothing may crash or leak. */
#include "base/alloc.h"
#include "tracer/archive.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tracer_manifest *m = NULL, *back = NULL;
    char problems[1024], msg[256];
    char *text = NULL;
    size_t len = 0;

    if (tracer_manifest_parse((const char *)data, size, "fuzz", &m) != TRACER_ARCHIVE_OK)
        return 0;
    (void)tracer_manifest_check(m, problems, sizeof problems);
    (void)tracer_manifest_check_schema(m, 1, msg, sizeof msg);
    if (tracer_manifest_serialize(m, &text, &len) != TRACER_ARCHIVE_OK)
        abort(); /* a parsed manifest always serializes */
    if (tracer_manifest_parse(text, len, "again", &back) != TRACER_ARCHIVE_OK ||
        tracer_manifest_count(back) != tracer_manifest_count(m))
        abort();
    for (size_t i = 0; i < tracer_manifest_count(m); i++)
        if (strcmp(tracer_manifest_key_at(m, i), tracer_manifest_key_at(back, i)) ||
            strcmp(tracer_manifest_value_at(m, i), tracer_manifest_value_at(back, i)))
            abort();
    base_free(text);
    tracer_manifest_destroy(back);
    tracer_manifest_destroy(m);
    return 0;
}
