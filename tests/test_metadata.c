/*
 * test_metadata.c -- what a CTF trace is from its metadata alone
 * (tracer/metadata.c): fathom's traces, other tools' traces, and metadata
 * the scan must leave to the decoder (cut short, unbalanced, binary).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fixtures/testdir.h"
#include "tracer/metadata.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static char g_dir[PATH_MAX];

static const char head[] = "/* CTF 1.8 */\n"
                           "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
                           "trace { major = 1; minor = 8; byte_order = le;\n"
                           "  packet.header := struct { uint32_t magic; }; };\n";

/* dir/name/metadata with n bytes of text (and a stream file when streams). */
static const char *trace_with(const char *name, const void *text, size_t n, int streams)
{
    static char d[PATH_MAX + 64];
    char p[PATH_MAX + 128];
    snprintf(d, sizeof d, "%s/%s", g_dir, name);
    mkdir(d, 0700);
    snprintf(p, sizeof p, "%s/metadata", d);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
    for (int i = 0; i < streams; i++) {
        snprintf(p, sizeof p, "%s/chan_%d", d, i);
        f = fopen(p, "wb");
        assert_non_null(f);
        fclose(f);
    }
    return d;
}

static tracer_ctf_meta scan_text(const char *name, const char *body)
{
    char text[8192];
    snprintf(text, sizeof text, "%s%s", head, body);
    tracer_ctf_meta m;
    tracer_ctf_meta_scan(trace_with(name, text, strlen(text), 2), &m);
    return m;
}

/* LTTng's packetized form of text: packets of `psize` bytes, `be` byte order. */
static size_t packetize(const char *text, unsigned char *out, size_t psize, int be)
{
    size_t n = strlen(text), off = 0, o = 0;
    while (off < n) {
        size_t part = n - off < psize - 37 ? n - off : psize - 37;
        unsigned char *h = out + o;
        memset(h, 0, psize);
        const uint32_t v[] = { 0x75D11D57u, 0, 0, 0, 0, 0, (uint32_t)((37 + part) * 8), (uint32_t)(psize * 8) };
        for (int k = 0; k < 8; k++) {
            if (k >= 1 && k <= 4)
                continue; /* the uuid: zeros */
            const size_t at = k == 0 ? 0 : k == 5 ? 20 : k == 6 ? 24 : 28;
            for (int b = 0; b < 4; b++)
                h[at + b] = (unsigned char)(v[k] >> (be ? 24 - 8 * b : 8 * b));
        }
        h[35] = 1, h[36] = 8; /* CTF 1.8 */
        memcpy(h + 37, text + off, part);
        off += part, o += psize;
    }
    return o;
}

static void test_fathom_and_foreign(void **state)
{
    (void)state;
    tracer_ctf_meta m = scan_text("fathom", "event { name = \"fathom:run_begin\"; id = 0; fields := struct { "
                                            "uint32_t schema; }; };\nevent { name = \"other:tick\"; };\n");
    assert_int_equal(m.kind, TRACER_CTF_FATHOM);
    assert_int_equal(m.events, 2);
    assert_int_equal(m.streams, 2);
    /* an unquoted name is several tokens */
    m = scan_text("unquoted", "event { name = fathom:ops; };\n");
    assert_int_equal(m.kind, TRACER_CTF_FATHOM);
    m = scan_text("kernel", "env { domain = \"kernel\"; tracer_name = \"lttng-modules\"; tracer_major = 2; "
                            "tracer_minor = 13; };\nstream { id = 0; event.header := struct { uint32_t id; }; };\n"
                            "event { name = sched_switch; fields := struct { uint32_t name; }; };\n");
    assert_int_equal(m.kind, TRACER_CTF_FOREIGN);
    assert_int_equal(m.stream_classes, 1);
    char d[256];
    tracer_ctf_meta_describe(&m, d, sizeof d);
    assert_string_equal(d, "an LTTng kernel trace (lttng-modules 2.13, 1 event class, 2 streams)");
    /* fathom: names in comments, strings and nested blocks are no event class */
    m = scan_text("hidden", "/* event { name = \"fathom:run_begin\"; }; */\n// event { name = fathom:ops; };\n"
                            "env { note = \"event { name = fathom:ops; }\"; };\n"
                            "event { name = x; fields := struct { struct { uint32_t name; } fathom; }; };\n");
    assert_int_equal(m.kind, TRACER_CTF_FOREIGN);
    assert_int_equal(m.events, 1);
    m = scan_text("newschema", "event { name = \"fathom:run_begin_v9\"; };\n");
    assert_int_equal(m.kind, TRACER_CTF_NEWSCHEMA);
    assert_string_equal(m.unknown_fathom, "fathom:run_begin_v9");
}

static void test_left_to_the_decoder(void **state)
{
    (void)state;
    /* unbalanced, unterminated, no trace block, binary: the scan cannot tell */
    assert_int_equal(scan_text("open", "event { name = x;\n").kind, TRACER_CTF_UNKNOWN);
    assert_int_equal(scan_text("close", "event { name = x; }; };\n").kind, TRACER_CTF_UNKNOWN);
    assert_int_equal(scan_text("comment", "event { name = x; }; /* cut\n").kind, TRACER_CTF_UNKNOWN);
    assert_int_equal(scan_text("string", "event { name = \"x; };\n").kind, TRACER_CTF_UNKNOWN);
    const char notrace[] = "event { name = x; };\n";
    tracer_ctf_meta m;
    tracer_ctf_meta_scan(trace_with("notrace", notrace, strlen(notrace), 0), &m);
    assert_int_equal(m.kind, TRACER_CTF_UNKNOWN);
    const char bin[] = "trace { major = 1; };\0\x01\x02 event { name = x; };";
    tracer_ctf_meta_scan(trace_with("binary", bin, sizeof bin, 0), &m);
    assert_int_equal(m.kind, TRACER_CTF_UNKNOWN);
    tracer_ctf_meta_scan(trace_with("empty", "", 0, 0), &m);
    assert_int_equal(m.kind, TRACER_CTF_UNKNOWN);
    /* no metadata file at all */
    assert_int_equal(tracer_ctf_meta_scan(g_dir, &m), -1);
    assert_int_equal(m.kind, TRACER_CTF_UNKNOWN);
}

static void test_packetized(void **state)
{
    (void)state;
    char text[8192];
    snprintf(text, sizeof text, "%senv { tracer_name = \"lttng-ust\"; tracer_major = 2; };\n%s", head,
             "event { name = \"myapp:tick\"; };\nevent { name = \"myapp:tock\"; };\n");
    static unsigned char pk[65536];
    for (int be = 0; be < 2; be++) {
        size_t n = packetize(text, pk, 128, be); /* several packets */
        tracer_ctf_meta m;
        tracer_ctf_meta_scan(trace_with(be ? "pk-be" : "pk-le", pk, n, 1), &m);
        assert_int_equal(m.kind, TRACER_CTF_FOREIGN);
        assert_true(m.packetized);
        assert_int_equal(m.events, 2);
        char d[256];
        tracer_ctf_meta_describe(&m, d, sizeof d);
        assert_string_equal(d, "an LTTng userspace trace (lttng-ust 2.x, 2 event classes, 1 stream)");
        /* cut inside a packet's header, or a header that lies: damaged */
        tracer_ctf_meta_scan(trace_with("pk-cut", pk, n - 128 + 20, 1), &m);
        assert_int_equal(m.kind, TRACER_CTF_UNKNOWN);
        pk[28] ^= 0xff, pk[31] ^= 0xff; /* the first packet's size */
        tracer_ctf_meta_scan(trace_with("pk-size", pk, n, 1), &m);
        assert_int_equal(m.kind, TRACER_CTF_UNKNOWN);
    }
}

static void test_ctf2(void **state)
{
    (void)state;
    const char t[] =
        "\x1e{\"type\":\"preamble\",\"version\":2}\n\x1e{\"type\":\"event-record-class\",\"name\":\"a:b\"}\n";
    tracer_ctf_meta m;
    tracer_ctf_meta_scan(trace_with("ctf2", t, sizeof t - 1, 1), &m);
    assert_int_equal(m.kind, TRACER_CTF_FOREIGN);
    assert_true(m.ctf2);
    const char f[] = "\x1e{\"type\":\"event-record-class\",\"name\":\"fathom:ops\"}\n";
    tracer_ctf_meta_scan(trace_with("ctf2-fathom", f, sizeof f - 1, 1), &m);
    assert_int_equal(m.kind, TRACER_CTF_UNKNOWN); /* the decoder says it cannot read it */
}

int main(void)
{
    if (testdir_create(g_dir, sizeof g_dir, "metadata"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fathom_and_foreign),
        cmocka_unit_test(test_left_to_the_decoder),
        cmocka_unit_test(test_packetized),
        cmocka_unit_test(test_ctf2),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    testdir_remove(g_dir);
    return rc;
}
