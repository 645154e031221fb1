/* fuzz_trace -- trace decoding end to end: the bytes as an archive (the
 * seeds are the reference traces as plain tar, so mutations reach the CTF
 * metadata and streams), analyze_read() into a profile, a breakdown out.
 * A bad trace must be a one-line error; nothing may be left in $TMPDIR. */
#include "fuzz_common.h"

#include "analyze/read_trace.h"
#include "analyze/breakdown.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    /* a decoder that stops making progress is stopped well within
	 * libFuzzer's -timeout */
    setenv("FATHOM_DECODE_STALL", "10", 0);
    devnull = fopen("/dev/null", "w");
    if (!devnull)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    analyze_read_options o = { 0, 0 };
    analyze_profile *p = NULL;

    fz_write(data, size);
    base_errmsg_clear();
    if (analyze_read(fz_input, &o, &p) == 0) {
        analyze_breakdown(devnull, &p, 1, CLI_JSON, 10);
        analyze_profile_destroy(p);
    } else if (p || !strcmp(base_errmsg(), "no error")) {
        abort(); /* an error has a message and no profile */
    }
    fz_check_clean();
    return 0;
}
