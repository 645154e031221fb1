/* model.c -- what every workload shares: names, allocation, running a step. */
#include "models/model.h"

#include "base/alloc.h"

#include <string.h>

static const char *const preset_names[] = { "tiny", "small", "full" };
_Static_assert(sizeof preset_names / sizeof preset_names[0] == MODEL_PRESET_COUNT, "preset names");

const char *model_mode_name(model_mode m) { return exec_mode_name((exec_mode)m); }
const char *model_preset_name(model_preset p) { return (unsigned)p < MODEL_PRESET_COUNT ? preset_names[p] : "?"; }

int model_mode_from_name(const char *s)
{
    for (int i = 0; i < MODEL_MODE_COUNT; i++)
        if (strcmp(s, exec_mode_name((exec_mode)i)) == 0)
            return i;
    return -1;
}

int model_preset_from_name(const char *s)
{
    for (int i = 0; i < MODEL_PRESET_COUNT; i++)
        if (strcmp(s, preset_names[i]) == 0)
            return i;
    return -1;
}

const model_def *model_find(const char *name)
{
    for (int i = 0; i < model_registry_count; i++)
        if (strcmp(model_registry[i]->name, name) == 0)
            return model_registry[i];
    return NULL;
}

void model_print_data_formats(FILE *f)
{
    for (int i = 0; i < model_registry_count; i++)
        if (model_registry[i]->data_format)
            fprintf(f, "  %-9s %s\n", model_registry[i]->name, model_registry[i]->data_format);
}

int model_batch(const model_def *def, const model_config *cfg)
{
    return cfg->batch > 0 ? cfg->batch : def->batch[cfg->preset];
}

exec_status model_alloc(const model_def *def, const model_config *cfg, size_t priv_size, model **out)
{
    *out = NULL;
    model *m = base_calloc(1, sizeof *m);
    if (!m)
        return exec_fail(EXEC_ERR_NOMEM, "%s: out of memory", def->name);
    if (priv_size && !(m->priv = base_calloc(1, priv_size))) {
        base_free(m);
        return exec_fail(EXEC_ERR_NOMEM, "%s: out of memory", def->name);
    }
    m->def = def;
    m->cfg = *cfg;
    m->batch = model_batch(def, cfg);
    exec_status s = exec_graph_create(&m->g, cfg->seed);
    if (!s)
        exec_graph_settings_set(m->g, &cfg->settings);
    if (s) {
        base_free(m->priv);
        base_free(m);
        return s;
    }
    *out = m;
    return EXEC_OK;
}

void model_free(model *m)
{
    if (!m)
        return;
    exec_graph_destroy(m->g);
    base_free(m->priv);
    base_free(m);
}

exec_status model_run_graph(model *m)
{
    exec_run_opts o = { .inter = m->cfg.inter,
                        .max_phase = m->cfg.mode == MODEL_TRAIN ? EXEC_PHASE_update : EXEC_PHASE_forward };
    return exec_graph_run(m->g, &o);
}

int model_threads(const model *m)
{
    int t = m->cfg.settings.threads > 0 ? m->cfg.settings.threads : exec_threads_get();
    int inter = m->cfg.inter > 1 ? m->cfg.inter : 1;
    return t / inter > 1 ? t / inter : 1;
}

void model_settings_set(model *m, const exec_settings *s, int inter)
{
    m->cfg.settings = *s;
    m->cfg.inter = inter;
    exec_graph_settings_set(m->g, s);
    for (size_t i = 0; i < sizeof m->more / sizeof m->more[0]; i++)
        if (m->more[i])
            exec_graph_settings_set(m->more[i], s);
}
