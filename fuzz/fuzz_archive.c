/* fuzz_archive -- the archive reader (tracer_trace_open: format detection,
 * decompression, the header pre-scan, safe extraction, the MANIFEST) on any
 * bytes.  An accepted archive must list CTF paths inside its private
 * folder; accepted or not, nothing may be left in $TMPDIR once closed. */
#include "fuzz_common.h"

#include "tracer/archive.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tracer_trace *t = NULL;
    fz_write(data, size);
    base_errmsg_clear();
    if (tracer_trace_open(fz_input, &t) == TRACER_ARCHIVE_OK) {
        const char *root = tracer_trace_root(t);
        size_t rl = strlen(root);

        for (size_t i = 0; i < tracer_trace_ctf_count(t); i++)
            if (strncmp(tracer_trace_ctf_path(t, i), root, rl))
                abort(); /* a CTF path outside the tree */
        tracer_trace_close(t);
    } else if (t || !strcmp(base_errmsg(), "no error") || strchr(base_errmsg(), '\n')) {
        abort(); /* an error is one line and no trace */
    }
    fz_check_clean();
    return 0;
}
