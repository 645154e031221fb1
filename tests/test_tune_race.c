/* test_tune_race.c -- the tuner's race over its measured rounds, on
 * samples made by hand: a candidate near the leader stays in for another
 * round (its pair of samples just above the leader's is the noise of two
 * samples, vgg's training on this VM), one clearly slower drops out, a tie
 * ends the race, from the third round one busy sample of the leader's does
 * not keep a slower candidate in, nor its profiled first sample from the
 * second, auto and a forced convolution algorithm
 * pair in a tie, the defaults are kept in a tie, and the statistics (median, fastest, slowest per sample of
 * the batch). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>

#include "replay/tune_race.h"

enum { STRIDE = 64 };

static replay_tune_cand cand(int rounds, int batch)
{
    return (replay_tune_cand){ .k = { .threads = 2, .inter = 1, .batch = batch }, .rounds = rounds };
}

static void test_stats(void **state)
{
    (void)state;
    double med, mn, mx;
    replay_tune_cand c = cand(2, 1);
    const double two[] = { 64.0, 20.0 }; /* a busy moment stretched one sample */
    replay_tune_stats(two, &c, &med, &mn, &mx);
    assert_true(med == 20.0 && mn == 20.0 && mx == 64.0); /* of two, the faster */
    c = cand(5, 8);
    const double five[] = { 88, 80, 96, 72, 104 };
    replay_tune_stats(five, &c, &med, &mn, &mx);
    assert_true(med == 11.0 && mn == 9.0 && mx == 13.0); /* per sample of a batch of 8 */
    c = cand(4, 1);
    const double four[] = { 4, 1, 3, 2 };
    replay_tune_stats(four, &c, &med, &mn, &mx);
    assert_true(med == 2.0); /* the lower middle */
}

/* vgg small training, the tuner's two rounds (ms a step, batch 8): the
 * defaults, two inter-op workers (4% faster in a duel of 20 rounds), bound
 * and im2col. */
static void test_near_stays_far_drops(void **state)
{
    (void)state;
    double s[4 * STRIDE] = { 0 };
    const double v[4][2] = { { 20.22, 20.70 }, { 20.99, 21.78 }, { 21.83, 22.13 }, { 26.82, 28.25 } };
    replay_tune_cand c[4];
    int active[4];
    for (int i = 0; i < 4; i++) {
        s[i * STRIDE] = v[i][0], s[i * STRIDE + 1] = v[i][1];
        c[i] = cand(2, 8), active[i] = 1;
    }
    int tie = -1, in = replay_tune_race(s, STRIDE, c, 4, active, REPLAY_TUNE_TIE, &tie);
    print_message(
        "in %d: defaults %d, two workers %d (fastest %.2f, the defaults' slowest %.2f), bound %d, im2col %d\n", in,
        active[0], active[1], v[1][0], v[0][1], active[2], active[3]);
    assert_int_equal(in, 2);
    assert_true(active[0] && active[1]);   /* 20.99 against 20.70: within the tie's margin */
    assert_true(!active[2] && !active[3]); /* 21.83 and 26.82: slower than 20.70 by more than 1.5% */
    assert_int_equal(tie, 0);              /* two workers' median is 3.8% off the leader's */

    /* three more rounds: the two workers' samples as the duel had them */
    const double more[3][2] = { { 20.10, 19.40 }, { 20.40, 19.30 }, { 20.05, 19.45 } };
    for (int r = 0; r < 3; r++) {
        s[2 + r] = more[r][0], s[STRIDE + 2 + r] = more[r][1];
        c[0].rounds++, c[1].rounds++;
        in = replay_tune_race(s, STRIDE, c, 4, active, REPLAY_TUNE_TIE, &tie);
    }
    double m0, m1, x;
    replay_tune_stats(s, &c[0], &m0, &x, &x);
    replay_tune_stats(s + STRIDE, &c[1], &m1, &x, &x);
    print_message("after 5 rounds, a sample of the batch: defaults %.3f ms, two workers %.3f ms; in %d\n", m0, m1, in);
    assert_true(m1 < m0);    /* the leader now */
    assert_int_equal(in, 2); /* the defaults within the margin of its slowest */
}

static void test_tie(void **state)
{
    (void)state;
    double s[3 * STRIDE] = { 0 };
    const double v[3][2] = { { 10.0, 10.4 }, { 10.1, 10.3 }, { 10.14, 10.5 } };
    replay_tune_cand c[3];
    int active[3];
    for (int i = 0; i < 3; i++) {
        s[i * STRIDE] = v[i][0], s[i * STRIDE + 1] = v[i][1];
        c[i] = cand(2, 1), active[i] = 1;
    }
    int tie = 0;
    assert_int_equal(replay_tune_race(s, STRIDE, c, 3, active, REPLAY_TUNE_TIE, &tie), 3);
    assert_int_equal(tie, 1); /* 10.1 and 10.14 within 1.5% of 10.0 */
    s[2 * STRIDE] = 10.2;     /* 2% off: no tie, but within the margin of the leader's slowest */
    assert_int_equal(replay_tune_race(s, STRIDE, c, 3, active, REPLAY_TUNE_TIE, &tie), 3);
    assert_int_equal(tie, 0);
    s[2 * STRIDE] = 10.6, s[2 * STRIDE + 1] = 10.7; /* beyond 10.4 x 1.015: out; the rest a tie */
    assert_int_equal(replay_tune_race(s, STRIDE, c, 3, active, REPLAY_TUNE_TIE, &tie), 2);
    assert_true(!active[2] && tie == 1);
}

/* speech small training, the tuner's rounds (ms a step): the defaults
 * with one busy sample, two inter-op workers 10% slower by their medians.
 * Over two rounds the busy sample keeps the workers in; from the third,
 * the leader's slowest but one bounds the race and they are out. */
static void test_leader_outlier(void **state)
{
    (void)state;
    double s[2 * STRIDE] = { 0 };
    const double v[2][3] = { { 276.2, 253.9 }, { 279.9, 269.4 } };
    replay_tune_cand c[2] = { cand(2, 16), cand(2, 16) };
    int active[2] = { 1, 1 }, tie = -1;
    for (int i = 0; i < 2; i++)
        s[i * STRIDE] = v[i][0], s[i * STRIDE + 1] = v[i][1];
    assert_int_equal(replay_tune_race(s, STRIDE, c, 2, active, REPLAY_TUNE_TIE, &tie),
                     2); /* 269.4 within 276.2 x 1.015 */
    assert_int_equal(tie, 0);
    s[2] = 254.8, s[STRIDE + 2] = 298.8, c[0].rounds = c[1].rounds = 3;
    int in = replay_tune_race(s, STRIDE, c, 2, active, REPLAY_TUNE_TIE, &tie);
    print_message("round 3: in %d (the workers' fastest 269.4 against the defaults' slowest but one 254.8)\n", in);
    assert_int_equal(in, 1);
    assert_true(active[0] && !active[1]);
    /* a leader whose three samples are alike keeps its slowest as the bound: a candidate 1% off it stays */
    const double w[2][3] = { { 100.0, 101.0, 102.0 }, { 102.5, 104.0, 105.0 } };
    active[0] = active[1] = 1;
    for (int i = 0; i < 2; i++)
        for (int r = 0; r < 3; r++)
            s[i * STRIDE + r] = w[i][r];
    assert_int_equal(replay_tune_race(s, STRIDE, c, 2, active, REPLAY_TUNE_TIE, &tie),
                     2); /* 102.5 within 101 x 1.015 */
}

/* memnet small inference, the tuner's two rounds (ms a step): the
 * defaults' first sample their profiled steps (0.375, where their median
 * over five rounds was 0.278), two bound inter-op workers 6% slower
 * (0.295 over five). The profiled sample bounds no race: the workers are
 * out after two rounds, where as any other sample it kept them in. */
static void test_profiled_sample(void **state)
{
    (void)state;
    double s[2 * STRIDE] = { 0 };
    s[0] = 0.3747, s[1] = 0.2818, s[STRIDE] = 0.2949, s[STRIDE + 1] = 0.2990;
    replay_tune_cand c[2] = { cand(2, 32), cand(2, 32) };
    int active[2] = { 1, 1 }, tie = -1;
    assert_int_equal(replay_tune_race(s, STRIDE, c, 2, active, REPLAY_TUNE_TIE, &tie),
                     2); /* not profiled: 0.2949 < 0.3747 */
    c[0].profiled = 1;
    int in = replay_tune_race(s, STRIDE, c, 2, active, REPLAY_TUNE_TIE, &tie);
    print_message("profiled: in %d (the workers' fastest 0.2949 against the defaults' 0.2818 after it)\n", in);
    assert_int_equal(in, 1);
    assert_true(active[0] && !active[1]);
}

/* After one round, REPLAY_TUNE_FAR: autoenc's small training, the
 * defaults' profiled sample 3.16 ms, two inter-op workers 4.32 (1.37x;
 * 1.36-1.39x in the sweeps) out, a point 1.15x stays; memnet's
 * inference, the defaults' profiled sample 0.3747 against two workers'
 * 0.2949 (1.27x, where the defaults' median over five rounds was 0.278):
 * a profiled sample alone puts no candidate out. */
static void test_far_after_one_round(void **state)
{
    (void)state;
    double s[3 * STRIDE] = { 0 };
    s[0] = 3.16, s[STRIDE] = 4.32, s[2 * STRIDE] = 3.63;
    replay_tune_cand c[3] = { cand(1, 64), cand(1, 64), cand(1, 64) };
    c[0].profiled = 1;
    int active[3] = { 1, 1, 1 }, tie = -1;
    int in = replay_tune_race(s, STRIDE, c, 3, active, REPLAY_TUNE_FAR, &tie);
    print_message("autoenc: in %d (4.32 and 3.63 against the defaults' profiled 3.16)\n", in);
    assert_int_equal(in, 2);
    assert_true(active[0] && !active[1] && active[2]);
    /* the same samples under the second round's margin: 3.63 is out too */
    active[1] = 1;
    assert_int_equal(replay_tune_race(s, STRIDE, c, 3, active, REPLAY_TUNE_TIE, &tie), 1);

    double m[2 * STRIDE] = { 0 };
    m[0] = 0.3747, m[STRIDE] = 0.2949;
    replay_tune_cand d[2] = { cand(1, 32), cand(1, 32) };
    int act[2] = { 1, 1 };
    d[0].profiled = 1;
    assert_int_equal(replay_tune_race(m, STRIDE, d, 2, act, REPLAY_TUNE_FAR, &tie), 2); /* profiled only: stays */
    d[0].profiled = 0;
    assert_int_equal(replay_tune_race(m, STRIDE, d, 2, act, REPLAY_TUNE_FAR, &tie), 1); /* a sample of its own: out */
    assert_true(!act[0] && act[1]);

    /* seq2seq's training, run 50: two inter-op workers, predicted at 28.0
     * ms, sampled 39.03 against the defaults' profiled 32.45: in until a
     * second sample (then 29.55: it leads); not predicted, out at once */
    double q[2 * STRIDE] = { 0 };
    q[0] = 32.45, q[STRIDE] = 39.03;
    replay_tune_cand e[2] = { cand(1, 32), cand(1, 32) };
    e[0].profiled = 1, e[1].predicted_ns = 27.99;
    int ac[2] = { 1, 1 };
    assert_int_equal(replay_tune_race(q, STRIDE, e, 2, ac, REPLAY_TUNE_FAR, &tie), 2);
    e[0].rounds = e[1].rounds = 2, q[1] = 32.35, q[STRIDE + 1] = 29.55;
    assert_int_equal(replay_tune_race(q, STRIDE, e, 2, ac, REPLAY_TUNE_TIE, &tie), 2); /* 29.55 leads, 32.35 not out */
    q[STRIDE + 1] = 39.5;                                                              /* a second slow sample: out */
    assert_int_equal(replay_tune_race(q, STRIDE, e, 2, ac, REPLAY_TUNE_FAR, &tie), 1);
    assert_true(ac[0] && !ac[1]);
    e[1].predicted_ns = 32.2, e[1].rounds = 1, ac[1] = 1; /* predicted within a tie of the leader: out at once */
    assert_int_equal(replay_tune_race(q, STRIDE, e, 2, ac, REPLAY_TUNE_FAR, &tie), 1);
    e[1].predicted_ns = 0, ac[1] = 1; /* not predicted: out at once */
    assert_int_equal(replay_tune_race(q, STRIDE, e, 2, ac, REPLAY_TUNE_FAR, &tie), 1);
}

/* A round's order: each candidate once, a group's candidates back to
 * back, the groups in an order that changes from round to round; with
 * first, the groups that hold such a candidate ahead of the rest. */
static void test_round_order(void **state)
{
    (void)state;
    const int hid[6] = { 0, 0, 1, 1, 2, 2 }, first[6] = { 0, 0, 0, 0, 1, 0 };
    uint64_t rng = 0x9e3779b97f4a7c15u;
    int lead_seen[3] = { 0 };
    for (int round = 0; round < 60; round++) {
        const int with_first = round % 2;
        int order[6], seen[6] = { 0 };
        replay_tune_round_order(6, hid, 3, with_first ? first : NULL, &rng, order);
        for (int j = 0; j < 6; j++) {
            assert_true(order[j] >= 0 && order[j] < 6);
            assert_int_equal(seen[order[j]]++, 0);
        }
        for (int j = 0; j < 6; j += 2) /* three groups of two: each pair one group */
            assert_int_equal(hid[order[j]], hid[order[j + 1]]);
        if (with_first)
            assert_int_equal(hid[order[0]], 2);
        else
            lead_seen[hid[order[0]]] = 1;
    }
    print_message("groups leading a round without first: %d %d %d\n", lead_seen[0], lead_seen[1], lead_seen[2]);
    assert_true(lead_seen[0] && lead_seen[1] && lead_seen[2]);
}

/* Auto and a forced convolution algorithm in a tie: an auto best pairs
 * with the fastest forced point within 3%; a forced best (residual's
 * training: direct 23.64 ms, auto 23.93) with its own point under auto
 * only, not with auto at other threads. */
static void test_conv_tie(void **state)
{
    (void)state;
    replay_tune_cand c[5];
    const struct {
        int threads, inter;
        exec_conv_algo a;
        double ns;
    } v[5] = {
        { 2, 1, EXEC_CONV_AUTO, 23.93 }, { 2, 1, EXEC_CONV_DIRECT, 23.64 }, { 2, 1, EXEC_CONV_IM2COL, 26.45 },
        { 2, 2, EXEC_CONV_AUTO, 23.70 }, { 1, 1, EXEC_CONV_AUTO, 30.0 },
    };
    for (int i = 0; i < 5; i++) {
        c[i] = cand(2, 16);
        c[i].k.threads = v[i].threads, c[i].k.inter = v[i].inter, c[i].k.conv_algo = v[i].a;
        c[i].per_sample_ns = v[i].ns;
    }
    assert_int_equal(replay_tune_conv_tie(c, 5, 1), 0); /* direct's own point under auto, not t2 i2's 23.70 */
    c[0].per_sample_ns = 24.2;                          /* 2.4% off: a tie (REPLAY_TUNE_CONV_TIE) */
    assert_int_equal(replay_tune_conv_tie(c, 5, 1), 0);
    c[0].per_sample_ns = 24.5; /* 3.6% off: no tie */
    assert_int_equal(replay_tune_conv_tie(c, 5, 1), -1);
    c[0].per_sample_ns = 23.5, c[1].per_sample_ns = 23.8; /* auto the best: the forced within 3% */
    assert_int_equal(replay_tune_conv_tie(c, 5, 0), 1);
    c[3].per_sample_ns = 23.0;                           /* an auto best at t2 i2 pairs with any forced point */
    assert_int_equal(replay_tune_conv_tie(c, 5, 3), -1); /* 23.8 is 3.5% off */
    c[1].per_sample_ns = 23.3;
    assert_int_equal(replay_tune_conv_tie(c, 5, 3), 1);
    c[1].rounds = 0; /* not measured */
    assert_int_equal(replay_tune_conv_tie(c, 5, 3), -1);
}

/* the defaults within 1.5% of the fastest are picked (residual's training:
 * two workers 31.26 ms, the defaults 31.52); 2% off, or not measured, not */
static void test_defaults_tie(void **state)
{
    (void)state;
    replay_tune_cand c[3] = { cand(4, 16), cand(4, 16), cand(2, 16) };
    c[0].per_sample_ns = 31.52, c[1].per_sample_ns = 31.26, c[2].per_sample_ns = 38.39;
    assert_int_equal(replay_tune_defaults_tie(c, 1, 0), 0);
    assert_int_equal(replay_tune_defaults_tie(c, 0, 0), 0); /* the defaults the fastest */
    c[0].per_sample_ns = 31.26 * 1.02;
    assert_int_equal(replay_tune_defaults_tie(c, 1, 0), 1);
    c[0].per_sample_ns = 31.3, c[0].rounds = 0;
    assert_int_equal(replay_tune_defaults_tie(c, 1, 0), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_near_stays_far_drops),
        cmocka_unit_test(test_tie),
        cmocka_unit_test(test_leader_outlier),
        cmocka_unit_test(test_conv_tie),
        cmocka_unit_test(test_defaults_tie),
        cmocka_unit_test(test_profiled_sample),
        cmocka_unit_test(test_far_after_one_round),
        cmocka_unit_test(test_round_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
