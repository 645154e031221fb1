/* mnist.c -- autoenc's data: synthetic 28x28 digits drawn from stroke
 * skeletons, and a loader for MNIST's idx files. */
#include "models/seqdata.h"

#include "base/alloc.h"
#include "exec/rng.h"

#include <math.h>
#include <string.h>

void model_mnist_destroy(model_mnist_set *s)
{
    if (!s)
        return;
    base_free(s->images);
    base_free(s->labels);
    base_free(s);
}

/* ---- the generator ------------------------------------------------------ */
/* Each digit a polyline in a unit box (x right, y down). */
typedef struct pt {
    float x, y;
} pt;
static const pt d0[] = { { .5f, 0 },    { .8f, .15f }, { .9f, .5f },  { .8f, .85f }, { .5f, 1 },
                         { .2f, .85f }, { .1f, .5f },  { .2f, .15f }, { .5f, 0 } };
static const pt d1[] = { { .3f, .2f }, { .55f, 0 }, { .55f, 1 } };
static const pt d2[] = { { .15f, .25f }, { .3f, .05f }, { .7f, .05f }, { .85f, .25f },
                         { .8f, .45f },  { .15f, 1 },   { .9f, 1 } };
static const pt d3[] = {
    { .15f, .05f }, { .85f, .05f }, { .45f, .45f }, { .85f, .65f }, { .75f, .95f }, { .15f, .95f }
};
static const pt d4[] = { { .7f, 1 }, { .7f, 0 }, { .1f, .65f }, { .9f, .65f } };
static const pt d5[] = { { .85f, 0 },   { .2f, 0 },    { .15f, .45f }, { .7f, .45f },
                         { .85f, .7f }, { .7f, .95f }, { .15f, .95f } };
static const pt d6[] = { { .8f, .05f }, { .3f, .3f },  { .15f, .7f }, { .35f, .97f },
                         { .7f, .95f }, { .85f, .7f }, { .6f, .5f },  { .2f, .6f } };
static const pt d7[] = { { .1f, .05f }, { .9f, .05f }, { .4f, 1 } };
static const pt d8[] = { { .5f, .5f },   { .2f, .3f },  { .3f, .05f }, { .7f, .05f },  { .8f, .3f }, { .5f, .5f },
                         { .15f, .72f }, { .3f, .97f }, { .7f, .97f }, { .85f, .72f }, { .5f, .5f } };
static const pt d9[] = { { .85f, .35f }, { .6f, .5f },  { .2f, .4f },   { .2f, .1f },
                         { .5f, .02f },  { .85f, .2f }, { .85f, .35f }, { .75f, 1 } };
#define NPTS(a) (int)(sizeof a / sizeof a[0])
static const struct {
    const pt *p;
    int n;
} digits[10] = {
    { d0, NPTS(d0) }, { d1, NPTS(d1) }, { d2, NPTS(d2) }, { d3, NPTS(d3) }, { d4, NPTS(d4) },
    { d5, NPTS(d5) }, { d6, NPTS(d6) }, { d7, NPTS(d7) }, { d8, NPTS(d8) }, { d9, NPTS(d9) },
};

static float seg_dist(float px, float py, pt a, pt b)
{
    float dx = b.x - a.x, dy = b.y - a.y, l2 = dx * dx + dy * dy;
    float t = l2 > 0 ? ((px - a.x) * dx + (py - a.y) * dy) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float ex = a.x + t * dx - px, ey = a.y + t * dy - py;
    return sqrtf(ex * ex + ey * ey);
}

/* the pixels [*lo, *hi] of one axis (0-27) whose centres, at i + 0.5, lie
 * within `reach` of the span between u and v */
static void reach_span(float u, float v, float reach, int *lo, int *hi)
{
    const float a = fminf(u, v) - reach - 0.5f, b = fmaxf(u, v) + reach - 0.5f;
    *lo = a > 0 ? (int)ceilf(a) : 0;
    *hi = b < 27 ? (int)floorf(b) : 27;
}

/* One digit's draw from the generator's stream: its class and jitter. */
typedef struct digit_draw {
    int d;
    float s, sx, slant, ox, oy, thick, ink;
} digit_draw;

static digit_draw digit_take(exec_rng *r)
{
    digit_draw g;
    g.d = (int)exec_rng_below(r, 10);
    /* the MNIST habit: a 20x20 box centred in 28x28, then jitter */
    g.s = 20.0f * (0.8f + 0.25f * exec_rng_uniform(r));
    g.sx = g.s * (0.65f + 0.35f * exec_rng_uniform(r));
    g.slant = 0.6f * exec_rng_uniform(r) - 0.3f;
    g.ox = 14.0f + 3.0f * exec_rng_uniform(r) - 1.5f;
    g.oy = 14.0f + 3.0f * exec_rng_uniform(r) - 1.5f;
    g.thick = 1.2f + 1.2f * exec_rng_uniform(r);
    g.ink = 0.85f + 0.15f * exec_rng_uniform(r);
    return g;
}

static void digit_render(const digit_draw *gp, float *img)
{
    const digit_draw g = *gp; /* a copy: img's stores cannot alias it */
    pt q[16];
    int n = digits[g.d].n;
    for (int i = 0; i < n; i++) {
        pt p = digits[g.d].p[i];
        float y = (p.y - 0.5f) * g.s, x = (p.x - 0.5f) * g.sx - g.slant * y;
        q[i] = (pt){ g.ox + x, g.oy + y };
    }
    /* each pixel's distance to the nearest stroke, measured only within
     * reach of each segment: a pixel past `reach` of a segment in x or y
     * is inked by a nearer one or not at all */
    const float reach = g.thick * 0.5f + 0.5f;
    float dmin[28 * 28];
    for (int i = 0; i < 28 * 28; i++)
        dmin[i] = 1e9f;
    for (int i = 0; i + 1 < n; i++) {
        const pt a = q[i], b = q[i + 1];
        int x0, x1, y0, y1;
        reach_span(a.x, b.x, reach, &x0, &x1);
        reach_span(a.y, b.y, reach, &y0, &y1);
        for (int y = y0; y <= y1; y++)
            for (int x = x0; x <= x1; x++) {
                float dd = seg_dist((float)x + 0.5f, (float)y + 0.5f, a, b);
                if (dd < dmin[y * 28 + x])
                    dmin[y * 28 + x] = dd;
            }
    }
    for (int i = 0; i < 28 * 28; i++) {
        float v = reach - dmin[i];
        img[i] = v <= 0 ? 0 : v >= 1 ? g.ink : v * g.ink;
    }
}

exec_status model_mnist_generate(int n, uint64_t seed, int threads, model_mnist_set **out)
{
    *out = NULL;
    if (n < 1)
        return exec_fail(EXEC_ERR_ARG, "mnist: %d images", n);
    model_mnist_set *s = base_calloc(1, sizeof *s);
    if (!s)
        return exec_fail(EXEC_ERR_NOMEM, "mnist: out of memory");
    s->n = n;
    s->rows = s->cols = 28;
    s->images = base_malloc((size_t)n * 784 * sizeof *s->images);
    s->labels = base_malloc((size_t)n);
    digit_draw *g = base_malloc((size_t)n * sizeof *g);
    if (!s->images || !s->labels || !g) {
        base_free(g);
        model_mnist_destroy(s);
        return exec_fail(EXEC_ERR_NOMEM, "mnist: out of memory");
    }
    /* the draws in the stream's order, then the images from them in
     * parallel: the same images for any number of threads */
    exec_rng r = exec_rng_make(seed ^ 0x3a15ull);
    for (int i = 0; i < n; i++) {
        g[i] = digit_take(&r);
        s->labels[i] = (uint8_t)g[i].d;
    }
#pragma omp parallel for schedule(static) num_threads(threads > 1 ? threads : 1)
    for (int i = 0; i < n; i++)
        digit_render(&g[i], s->images + (size_t)i * 784);
    base_free(g);
    *out = s;
    return EXEC_OK;
}

/* ---- idx files ---------------------------------------------------------- */
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

exec_status model_mnist_load(const char *images_path, const char *labels_path, model_mnist_set **out)
{
    *out = NULL;
    char *ib = NULL, *lb = NULL;
    size_t il = 0, ll = 0;
    model_mnist_set *s = NULL;
    exec_status st = model_seq_read_file(images_path, (size_t)1 << 30, &ib, &il);
    if (st)
        return st;
    const unsigned char *p = (const unsigned char *)ib;
    if (il < 16) {
        st = exec_fail(EXEC_ERR_IO, "%s: %zu bytes, too short for an idx header", images_path, il);
        goto done;
    }
    if (be32(p) != 0x00000803) {
        st =
            exec_fail(EXEC_ERR_IO, "%s: magic 0x%08x, not an idx3-ubyte image file (0x00000803)", images_path, be32(p));
        goto done;
    }
    uint32_t n = be32(p + 4), rows = be32(p + 8), cols = be32(p + 12);
    if (n == 0 || rows == 0 || cols == 0 || rows > 4096 || cols > 4096 || n > (1u << 26)) {
        st = exec_fail(EXEC_ERR_IO, "%s: bad dimensions %u x %u x %u", images_path, n, rows, cols);
        goto done;
    }
    uint64_t want = 16 + (uint64_t)n * rows * cols;
    if ((uint64_t)il != want) {
        st = exec_fail(EXEC_ERR_IO, "%s: %zu bytes where %u images of %ux%u need %llu (%s)", images_path, il, n, rows,
                       cols, (unsigned long long)want, (uint64_t)il < want ? "truncated" : "trailing data");
        goto done;
    }
    if (labels_path) {
        if ((st = model_seq_read_file(labels_path, (size_t)1 << 28, &lb, &ll)))
            goto done;
        const unsigned char *q = (const unsigned char *)lb;
        if (ll < 8 || be32(q) != 0x00000801) {
            st = exec_fail(EXEC_ERR_IO, "%s: not an idx1-ubyte label file (magic 0x00000801)", labels_path);
            goto done;
        }
        if (be32(q + 4) != n || ll != 8 + (size_t)n) {
            st = exec_fail(EXEC_ERR_IO, "%s: %u labels in %zu bytes for %u images", labels_path, be32(q + 4), ll, n);
            goto done;
        }
        for (uint32_t i = 0; i < n; i++)
            if (q[8 + i] > 9) {
                st = exec_fail(EXEC_ERR_IO, "%s: label %u of image %u is not a digit", labels_path, q[8 + i], i);
                goto done;
            }
    }
    s = base_calloc(1, sizeof *s);
    if (!s || !(s->images = base_malloc((size_t)n * rows * cols * sizeof *s->images)) ||
        (labels_path && !(s->labels = base_malloc(n)))) {
        st = exec_fail(EXEC_ERR_NOMEM, "mnist: out of memory");
        goto done;
    }
    s->n = (int)n;
    s->rows = (int)rows;
    s->cols = (int)cols;
    for (size_t i = 0; i < (size_t)n * rows * cols; i++)
        s->images[i] = (float)p[16 + i] / 255.0f;
    if (labels_path)
        memcpy(s->labels, lb + 8, n);
    *out = s;
    s = NULL;
done:
    model_mnist_destroy(s);
    base_free(ib);
    base_free(lb);
    return st;
}
