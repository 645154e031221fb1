/* layers.h -- layer helpers the convolutional workloads share: each appends
 * the nodes of one layer (weights included) with the engine's builders and
 * returns its output tensor id (0 on error, recorded in the graph). */
#ifndef FATHOM_MODELS_LAYERS_H
#define FATHOM_MODELS_LAYERS_H
#include "exec/build.h"
#include "models/model.h"

/* conv k x k (He init), stride, symmetric pad, optional bias; no activation.
 * x [N,C,H,W] -> [N,oc,H',W']. Weights are named "<name>/w", "<name>/b". */
uint32_t model_conv(exec_graph *g, const char *name, uint32_t x, int oc, int k, int stride, int pad, bool bias);
/* conv + bias + ReLU */
uint32_t model_conv_relu(exec_graph *g, const char *name, uint32_t x, int oc, int k, int stride, int pad);
/* fully connected: x [N,...] (flattened) x W [in,out] + b; no activation */
uint32_t model_fc(exec_graph *g, const char *name, uint32_t x, int out);
/* The classifier head of AlexNet and VGG: fc6 and fc7 of `width` units,
 * each with ReLU and (train) dropout 0.5, then fc8 to the classes. */
uint32_t model_fc_head(exec_graph *g, uint32_t x, int width, int classes, bool train);
/* batch norm over channels (scale ONE, offset ZERO, running stats of role
 * weight, not trained: the running variance is set to 1 by model_plan).
 * training: batch statistics (train graphs) or the running ones (infer). */
uint32_t model_batch_norm(exec_graph *g, const char *name, uint32_t x, bool training);
/* Checks the graph's builder status, then plans it when cfg->plan and sets
 * every running variance to 1. */
exec_status model_plan(model *m);
/* Channels (dim 1) of a tensor; 0 if the id is 0. */
int64_t model_dim(exec_graph *g, uint32_t x, int axis);
#endif
