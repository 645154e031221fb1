/* test_import.c -- the op table of `fathom import` (tracer/import_ops.def)
 * and its FLOP/byte formulas, and the exact time reader. */
#include "analyze/import.h"
#include "analyze/import_json.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static analyze_import_arg t2(int64_t a, int64_t b)
{
    analyze_import_arg x = { .ndim = 2, .d = { a, b }, .numel = (uint64_t)(a * b) };
    return x;
}

static analyze_import_arg t4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    analyze_import_arg x = { .ndim = 4, .d = { a, b, c, d }, .numel = (uint64_t)(a * b * c * d) };
    return x;
}

static analyze_import_arg t1(int64_t a)
{
    analyze_import_arg x = { .ndim = 1, .d = { a }, .numel = (uint64_t)a };
    return x;
}

static void table_is_sound(void **state)
{
    (void)state;
    size_t n = analyze_import_op_count();
    assert_true(n > 100);
    for (size_t i = 0; i < n; i++) {
        const analyze_import_op *op = analyze_import_op_at(i);
        assert_non_null(strstr(op->name, "::"));
        assert_true(op->cls < ANALYZE_IMPORT_OTHER); /* `other` is for names the table does not know */
        assert_true(op->cost < ANALYZE_IMPORT_COST_COUNT);
        assert_ptr_equal(analyze_import_lookup(op->name), op); /* found, and no name twice */
    }
    assert_null(analyze_import_op_at(n));
}

static void lookup_maps_classes_and_engine_ops(void **state)
{
    (void)state;
    static const struct {
        const char *name, *cls, *engine;
    } want[] = {
        { "aten::conv2d", "convolution", "Conv2D" },
        { "aten::convolution_backward", "convolution", "Conv2DBackpropInput,Conv2DBackpropFilter" },
        { "aten::addmm", "matrix", "MatMul" },
        { "aten::linear", "matrix", "MatMul" },
        { "aten::bmm", "matrix", "BatchMatMul" },
        { "aten::relu", "elementwise", "Relu" },
        { "aten::max_pool2d", "reduction", "MaxPool" },
        { "aten::batch_norm", "reduction", "FusedBatchNorm" },
        { "aten::log_softmax", "elementwise", "LogSoftmax" },
        { "aten::embedding", "data_movement", "Gather" },
        { "aten::dropout", "random", "Dropout" },
        { "aten::_foreach_add_", "optimization", "ApplyGradientDescent" },
        { "aten::lstm", "matrix", "" },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const analyze_import_op *op = analyze_import_lookup(want[i].name);
        assert_non_null(op);
        assert_string_equal(analyze_import_class_name(op->cls), want[i].cls);
        assert_string_equal(op->engine, want[i].engine);
    }
    assert_null(analyze_import_lookup("aten::no_such_op"));
    assert_null(analyze_import_lookup("conv2d"));
    assert_null(analyze_import_lookup(NULL));
    assert_string_equal(analyze_import_class_name(ANALYZE_IMPORT_OTHER), "other");
}

static void kernel_classes(void **state)
{
    (void)state;
    assert_int_equal(analyze_import_kernel_class("volta_sgemm_128x64_nn"), ANALYZE_IMPORT_MATRIX);
    assert_int_equal(analyze_import_kernel_class("ampere_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"),
                     ANALYZE_IMPORT_CONVOLUTION);
    assert_int_equal(analyze_import_kernel_class("Memcpy HtoD (Pageable -> Device)"), ANALYZE_IMPORT_DATA_MOVEMENT);
    assert_int_equal(analyze_import_kernel_class("void at::native::vectorized_elementwise_kernel<4>"),
                     ANALYZE_IMPORT_ELEMENTWISE);
    assert_int_equal(analyze_import_kernel_class("void at::native::reduce_kernel<512, 1>"), ANALYZE_IMPORT_REDUCTION);
    assert_int_equal(analyze_import_kernel_class("my_kernel"), ANALYZE_IMPORT_OTHER);
}

static void cost(const char *name, const analyze_import_arg *in, size_t nin, const analyze_import_arg *out, size_t nout,
                 uint64_t flops, uint64_t bytes)
{
    uint64_t f = 1, b = 1;
    const analyze_import_op *op = analyze_import_lookup(name);
    assert_non_null(op);
    analyze_import_cost_of(op->cost, in, nin, out, nout, 4, &f, &b);
    assert_int_equal(f, flops);
    assert_int_equal(b, bytes);
}

static void formulas(void **state)
{
    (void)state;
    analyze_import_arg mm[] = { t2(64, 128), t2(128, 32) };
    cost("aten::mm", mm, 2, NULL, 0, 2ull * 64 * 128 * 32, 4ull * (64 * 128 + 128 * 32 + 64 * 32));
    analyze_import_arg addmm[] = { t1(32), t2(64, 128), t2(128, 32) };
    cost("aten::addmm", addmm, 3, NULL, 0, 2ull * 64 * 128 * 32 + 64 * 32, 4ull * (32 + 64 * 128 + 128 * 32 + 64 * 32));
    analyze_import_arg lin[] = { t2(16, 64), t2(128, 64), t1(128) }; /* x[16,64] w[128,64] b[128] */
    cost("aten::linear", lin, 3, NULL, 0, 2ull * 16 * 64 * 128 + 16 * 128,
         4ull * (16 * 64 + 128 * 64 + 128 + 16 * 128));
    /* conv 8x3x32x32 * 16x3x3x3, same padding: 2 * N*OC*OH*OW * C*KH*KW */
    analyze_import_arg conv[] = { t4(8, 3, 32, 32), t4(16, 3, 3, 3), t1(16) };
    uint64_t cf = 2ull * 8 * 16 * 32 * 32 * 3 * 3 * 3;
    cost("aten::conv2d", conv, 3, NULL, 0, cf, 4ull * (8 * 3 * 32 * 32 + 16 * 27 + 16 + 8 * 16 * 32 * 32));
    /* with the output known (stride 2): its spatial size counts */
    analyze_import_arg o = t4(8, 16, 16, 16);
    cost("aten::conv2d", conv, 3, &o, 1, cf / 4, 4ull * (8 * 3 * 32 * 32 + 16 * 27 + 16 + 8 * 16 * 16 * 16));
    /* the backward: both gradients from dy's spatial size */
    analyze_import_arg bwd[] = { t4(8, 16, 32, 32), t4(8, 3, 32, 32), t4(16, 3, 3, 3) };
    cost("aten::convolution_backward", bwd, 3, NULL, 0, 2 * cf,
         4ull * (8 * 16 * 32 * 32 + 2 * 8 * 3 * 32 * 32 + 2 * 16 * 27));
    analyze_import_arg r = t2(16, 128);
    cost("aten::relu", &r, 1, NULL, 0, 16 * 128, 4ull * 2 * 16 * 128);
    cost("aten::view", &r, 1, NULL, 0, 0, 0);
    /* an LSTM: x[T=12,B=8,I=16], h0 [1,8,32]: 2 * T*B * 4H(I+H) */
    analyze_import_arg lstm[] = { { .ndim = 3, .d = { 12, 8, 16 }, .numel = 12 * 8 * 16 },
                                  { .ndim = 3, .d = { 1, 8, 32 }, .numel = 2 * 8 * 32, .is_list = 1 } };
    lstm[1].is_list = 0; /* the first tensor of the (h0, c0) list */
    uint64_t w = 4ull * 32 * (16 + 32);
    cost("aten::lstm", lstm, 2, NULL, 0, 2ull * 12 * 8 * w, 4ull * (12 * 8 * 16 + w + 12 * 8 * 32));
    /* unknown shapes: nothing */
    analyze_import_arg none[2];
    memset(none, 0, sizeof none);
    cost("aten::mm", none, 2, NULL, 0, 0, 0);
    cost("aten::conv2d", none, 1, NULL, 0, 0, 0);
}

static void attrs(void **state)
{
    (void)state;
    int64_t a[ANALYZE_IMPORT_MAX_ATTRS];
    /* conv2d(x, w, b, stride [2, 2], padding [1, 0], dilation, groups) */
    analyze_import_scalar conv[] = { { -1 },          { -1 },          { -1 },      { 2, { 2, 2 } },
                                     { 2, { 1, 0 } }, { 2, { 1, 1 } }, { 1, { 1 } } };
    assert_int_equal(analyze_import_attrs_of(analyze_import_lookup("aten::conv2d")->attrs, conv, 7, a), 4);
    assert_int_equal(a[0], 2), assert_int_equal(a[1], 2), assert_int_equal(a[2], 1), assert_int_equal(a[3], 0);
    /* convolution_backward: the same two lists one place later */
    analyze_import_scalar bwd[] = { { -1 }, { -1 }, { -1 }, { 1, { 32 } }, { 1, { 3 } }, { 2, { 0, 0 } } };
    assert_int_equal(analyze_import_attrs_of(analyze_import_lookup("aten::convolution_backward")->attrs, bwd, 6, a), 4);
    assert_int_equal(a[0], 3), assert_int_equal(a[1], 3), assert_int_equal(a[2], 0);
    /* max_pool2d(x, kernel [3, 3], stride [] = the kernel, padding [1, 1]) */
    analyze_import_scalar pool[] = { { -1 }, { 2, { 3, 3 } }, { 0 }, { 2, { 1, 1 } } };
    assert_int_equal(analyze_import_attrs_of(analyze_import_lookup("aten::max_pool2d")->attrs, pool, 4, a), 6);
    assert_int_equal(a[2], 3), assert_int_equal(a[3], 3), assert_int_equal(a[4], 1);
    assert_int_equal(analyze_import_attrs_of(analyze_import_lookup("aten::linear")->attrs, NULL, 0, a), 2);
    assert_int_equal(a[0], 0), assert_int_equal(a[1], 1);
    /* not given, or nonsense: no attrs */
    assert_int_equal(analyze_import_attrs_of(analyze_import_lookup("aten::conv2d")->attrs, conv, 3, a), 0);
    analyze_import_scalar zero[] = { { -1 }, { -1 }, { -1 }, { 2, { 0, 1 } }, { 2, { 1, 1 } } };
    assert_int_equal(analyze_import_attrs_of(analyze_import_lookup("aten::conv2d")->attrs, zero, 5, a), 0);
    analyze_import_scalar neg[] = { { -1 }, { 2, { -3, 3 } } };
    assert_int_equal(analyze_import_attrs_of(analyze_import_lookup("aten::max_pool2d")->attrs, neg, 2, a), 0);
    assert_int_equal(analyze_import_attrs_of(analyze_import_lookup("aten::relu")->attrs, conv, 7, a), 0);
}

static void exact_times(void **state)
{
    (void)state;
    int64_t ns = 0;
    const char *e = "{\"name\": \"x\", \"args\": {\"ts\": 5}, \"ts\": 1700000000000010.5006, \"dur\": 3}";
    assert_int_equal(analyze_json_us_to_ns(e, strlen(e), "\"ts\"", &ns), 0);
    assert_int_equal(ns, INT64_C(1700000000000010501)); /* rounded to the ns; not the nested "ts" */
    assert_int_equal(analyze_json_us_to_ns(e, strlen(e), "\"dur\"", &ns), 0);
    assert_int_equal(ns, 3000);
    assert_int_equal(analyze_json_us_to_ns(e, strlen(e), "\"id\"", &ns), -1);
    const char *bad = "{\"ts\": -4, \"dur\": \"soon\", \"x\": 1e3, \"big\": 99999999999999999999}";
    assert_int_equal(analyze_json_us_to_ns(bad, strlen(bad), "\"ts\"", &ns), -2);
    assert_int_equal(analyze_json_us_to_ns(bad, strlen(bad), "\"dur\"", &ns), -2);
    assert_int_equal(analyze_json_us_to_ns(bad, strlen(bad), "\"x\"", &ns), 1);
    assert_int_equal(analyze_json_us_to_ns(bad, strlen(bad), "\"big\"", &ns), -2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_is_sound), cmocka_unit_test(lookup_maps_classes_and_engine_ops),
        cmocka_unit_test(kernel_classes), cmocka_unit_test(formulas),
        cmocka_unit_test(attrs),          cmocka_unit_test(exact_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
