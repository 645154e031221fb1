/* fuzz_import -- `fathom import` end to end on any bytes: the bytes as a
 * PyTorch trace file (the JSON reader, its decompression, both parsers, the
 * source's schema-2 messages, sink.ctf.fs, the archive), then the archive
 * it wrote read back by fathom's own reader.  A file the importer refuses
 * is a one-line error, exit status 1, with nothing written; an archive it
 * writes must read as a clean trace: no malformed or unknown event, no
 * record of an undescribed node, no unpaired op or step, and run_end's op
 * count what the trace holds -- whatever `fathom import` accepts, fathom
 * reads.  Nothing may be left in $TMPDIR. */
#include "fuzz_common.h"

#include "analyze/import.h"
#include "analyze/read_trace.h"
#include "base/error.h"

#include <fcntl.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_out[4200];
static int devnull = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    snprintf(fz_out, sizeof fz_out, "%s/out.tar.zst", fz_dir);
    /* the read-back decodes fathom's own output: in process, where a
     * Babeltrace2 crash on what import wrote stops the run as a finding */
    setenv("FATHOM_DECODE_INPROCESS", "1", 1);
    setenv("LTTNG_UST_REGISTER_TIMEOUT", "0", 1);
    devnull = open("/dev/null", O_WRONLY);
    if (devnull < 0)
        abort();
    return 0;
}

/* cmd_import with its stdout (the archive's path) and stderr (the error,
 * warnings) sent to /dev/null: its exit status. */
static int import_quietly(void)
{
    char a0[] = "import", a1[] = "-o", a3[] = "--model", a4[] = "fuzz";
    char *argv[] = { a0, a1, fz_out, a3, a4, fz_input, NULL };
    int out = dup(1), err = dup(2);

    if (out < 0 || err < 0)
        abort();
    fflush(stdout);
    fflush(stderr);
    dup2(devnull, 1);
    dup2(devnull, 2);
    int rc = cmd_import(6, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(out, 1);
    dup2(err, 2);
    close(out);
    close(err);
    return rc;
}

static void fail(const char *what, const analyze_profile *p)
{
    fprintf(stderr, "fuzz_import: the imported archive %s\n", what);
    if (p) {
        char w[4096];
        analyze_profile_warnings(p, w, sizeof w);
        fprintf(stderr, "%s", w);
    }
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct stat st;

    fz_write(data, size);
    base_errmsg_clear();
    int rc = import_quietly();
    if (rc != 0) {
        if (rc != 1)
            fail("was refused with an exit status other than 1", NULL);
        if (stat(fz_out, &st) == 0)
            fail("was refused, yet an archive was written", NULL);
    } else {
        analyze_read_options o = { 0, 0 };
        analyze_profile *p = NULL;
        if (analyze_read(fz_out, &o, &p) != 0) {
            fprintf(stderr, "%s\n", base_errmsg());
            fail("does not read", NULL);
        }
        const analyze_diag *d = &p->diag;
        if (d->malformed_events || d->unknown_events || d->foreign_events)
            fail("holds malformed, unknown or foreign events", p);
        if (d->undefined_nodes || d->redefined_nodes)
            fail("names a node no node_def describes, or describes one twice", p);
        if (d->unmatched_begin || d->unmatched_end || d->duplicate_begin || d->unmatched_steps)
            fail("holds unpaired ops or steps", p);
        if (d->unknown_frees || d->run_begins != 1)
            fail("frees a tensor it never allocated, or holds other than one run", p);
        if (d->discarded_events || d->discarded_packets || d->discarded_unknown)
            fail("says events were discarded", p);
        if (!p->meta.have_begin || (p->meta.have_end && p->meta.ops != p->ops_seen))
            fail("has no run_begin, or its run_end's op count disagrees", p);
        analyze_profile_destroy(p);
        if (unlink(fz_out) != 0)
            abort();
    }
    fz_check_clean();
    return 0;
}
