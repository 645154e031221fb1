/* layers.c -- layer helpers shared by the convolutional workloads. */
#include "models/layers.h"

#include <stdio.h>
#include <string.h>

#define RUNNING_VAR "/running_var"

int64_t model_dim(exec_graph *g, uint32_t x, int axis)
{
    const exec_tensor *t = x ? exec_tensor_get(g, x) : NULL;
    return t && axis < t->ndim ? t->shape[axis] : 0;
}

static void wname(char *buf, size_t n, const char *layer, const char *what) { snprintf(buf, n, "%s/%s", layer, what); }

uint32_t model_conv(exec_graph *g, const char *name, uint32_t x, int oc, int k, int stride, int pad, bool bias)
{
    int64_t c = model_dim(g, x, 1);
    if (!c)
        return 0;
    char n[64];
    wname(n, sizeof n, name, "w");
    uint32_t w = exec_weight(g, n, 4, (int64_t[]){ oc, c, k, k }, EXEC_INIT_HE);
    uint32_t y = ex_conv2d(g, x, w, stride, stride, pad, pad);
    if (bias) {
        wname(n, sizeof n, name, "b");
        uint32_t b = exec_weight(g, n, 1, (int64_t[]){ oc }, EXEC_INIT_ZERO);
        y = ex_bias_add(g, y, b, 1);
    }
    return y;
}

uint32_t model_conv_relu(exec_graph *g, const char *name, uint32_t x, int oc, int k, int stride, int pad)
{
    return ex_relu(g, model_conv(g, name, x, oc, k, stride, pad, true));
}

uint32_t model_fc(exec_graph *g, const char *name, uint32_t x, int out)
{
    const exec_tensor *t = x ? exec_tensor_get(g, x) : NULL;
    if (!t)
        return 0;
    int64_t n = t->shape[0], in = t->numel / t->shape[0];
    if (t->ndim != 2)
        x = ex_reshape(g, x, 2, (int64_t[]){ n, in });
    char nm[64];
    wname(nm, sizeof nm, name, "w");
    uint32_t w = exec_weight(g, nm, 2, (int64_t[]){ in, out }, EXEC_INIT_GLOROT);
    wname(nm, sizeof nm, name, "b");
    uint32_t b = exec_weight(g, nm, 1, (int64_t[]){ out }, EXEC_INIT_ZERO);
    return ex_bias_add(g, ex_matmul(g, x, w, 0, 0), b, 1);
}

uint32_t model_fc_head(exec_graph *g, uint32_t x, int width, int classes, bool train)
{
    x = ex_relu(g, model_fc(g, "fc6", x, width));
    if (train)
        x = ex_dropout(g, x, 0.5f);
    x = ex_relu(g, model_fc(g, "fc7", x, width));
    if (train)
        x = ex_dropout(g, x, 0.5f);
    return model_fc(g, "fc8", x, classes);
}

uint32_t model_batch_norm(exec_graph *g, const char *name, uint32_t x, bool training)
{
    int64_t c = model_dim(g, x, 1);
    if (!c)
        return 0;
    char n[64];
    wname(n, sizeof n, name, "scale");
    uint32_t scale = exec_weight(g, n, 1, &c, EXEC_INIT_ONE);
    wname(n, sizeof n, name, "offset");
    uint32_t offset = exec_weight(g, n, 1, &c, EXEC_INIT_ZERO);
    wname(n, sizeof n, name, "running_mean");
    uint32_t mean = exec_tensor_new(g, EXEC_ROLE_weight, EXEC_F32, 1, &c, n);
    snprintf(n, sizeof n, "%s" RUNNING_VAR, name);
    uint32_t var = exec_tensor_new(g, EXEC_ROLE_weight, EXEC_F32, 1, &c, n);
    /* TF's defaults for ResNet: epsilon 1e-5 (He et al.: Caffe's), momentum 0.9 */
    return ex_fused_batch_norm(g, x, scale, offset, mean, var, 1e-5f, 0.9f, training ? 1 : 0);
}

exec_status model_plan(model *m)
{
    exec_status s = exec_graph_status(m->g);
    if (s || !m->cfg.plan)
        return s;
    if ((s = exec_graph_plan(m->g)))
        return s;
    size_t lv = strlen(RUNNING_VAR);
    for (uint32_t id = 1; id <= exec_tensor_count(m->g); id++) {
        exec_tensor *t = exec_tensor_get(m->g, id);
        size_t ln = strlen(t->name);
        if (t->role == EXEC_ROLE_weight && ln >= lv && strcmp(t->name + ln - lv, RUNNING_VAR) == 0)
            for (int64_t i = 0; i < t->numel; i++)
                ((float *)t->data)[i] = 1.0f;
    }
    return EXEC_OK;
}
