/* runner.c -- the shared run loop (see runner.h). */
#include "models/runner.h"

#include "base/clock.h"

#include <jansson.h>
#include <stdlib.h>
#include <math.h>
#include <unistd.h>
#include <time.h>

int model_default_steps(model_preset p) { return p == MODEL_TINY ? 20 : 12; }

static void emit(FILE *f, json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (s) {
        fprintf(f, "%s\n", s);
        fflush(f);
        free(s);
    }
    json_decref(o);
}

static json_t *loss_json(float l) { return isfinite(l) ? json_real(l) : json_null(); }

/* The process's CPU time so far, in ms (base/clock.h). */
static double cpu_ms(void) { return (double)base_cpu_ns() * 1e-6; }

exec_status model_runner(const model_def *def, const model_config *cfg, const model_run_opts *o, model_run_result *res)
{
    model_run_result r = { .first_loss = NAN, .last_loss = NAN };
    if (o->steps <= 0)
        return exec_fail(EXEC_ERR_ARG, "steps must be positive, not %d", o->steps);
    exec_threads_set(o->threads);
    model *m = NULL;
    exec_status s = model_create(def, cfg, &m);
    if (s)
        return s;
    r.params = exec_param_count(m->g);
    const int threads = cfg->settings.threads > 0 ? cfg->settings.threads : exec_threads_get();
    bool json = o->out && o->format == CLI_JSON;
    if (json)
        emit(o->out, json_pack("{s:s, s:s, s:s, s:i, s:I, s:i, s:i, s:i, s:I, s:s}", "model", def->name, "mode",
                               model_mode_name(cfg->mode), "preset", model_preset_name(cfg->preset), "batch", m->batch,
                               "params", (json_int_t)r.params, "steps", o->steps, "threads", threads, "inter",
                               cfg->inter > 1 ? cfg->inter : 1, "seed", (json_int_t)cfg->seed, "denormals",
                               exec_denormals_name(exec_denormals_get())));
    exec_run_info info = {
        .model = def->name,
        .mode = model_mode_name(cfg->mode),
        .preset = model_preset_name(cfg->preset),
        .version = FATHOM_VERSION,
        .blas = exec_blas_config(),
        .cpu = exec_cpu_model(),
        .batch = (uint32_t)m->batch,
        .steps = (uint32_t)o->steps,
        .threads = (uint32_t)threads,
        .inter = (uint32_t)(cfg->inter > 1 ? cfg->inter : 1),
        .seed = cfg->seed,
    };
    exec_trace_run_begin(&info);
    double rest = 0, rest_engine = 0, first_engine = 0;
    for (int i = 0; i < o->steps; i++) {
        float loss = NAN;
        if (exec_interrupted()) { /* a step in progress stops at an op boundary; none starts */
            s = exec_fail(EXEC_ERR_INTERRUPTED, "interrupted by signal %d", exec_interrupted());
            break;
        }
        exec_trace_step_begin((uint32_t)i);
        uint64_t e0 = exec_engine_ns();
        double c0 = cpu_ms(), t0 = (base_now_s() * 1e3);
        s = model_step(m, &loss);
        double ms = (base_now_s() * 1e3) - t0, engine_ms = (double)(exec_engine_ns() - e0) / 1e6;
        double step_cpu = cpu_ms() - c0;
        exec_trace_step_end((uint32_t)i, loss);
        if (s)
            break;
        r.steps++;
        r.total_ms += ms;
        if (i == 0) {
            r.first_ms = ms;
            first_engine = engine_ms;
            r.first_loss = loss;
        } else {
            rest += ms;
            rest_engine += engine_ms;
        }
        r.last_loss = loss;
        if (json)
            emit(o->out, json_pack("{s:i, s:o, s:f, s:f, s:f}", "step", i, "loss", loss_json(loss), "ms", ms,
                                   "engine_ms", engine_ms, "cpu_ms", step_cpu));
        if (o->step_fd > 0) {
            char line[48];
            int n = snprintf(line, sizeof line, "%d %d\n", i + 1, o->steps);
            if (pwrite(o->step_fd, line, (size_t)n, 0) == n)
                (void)!ftruncate(o->step_fd, n);
        }
        if (o->progress) {
            fprintf(o->progress, "\r%s %s %s: step %d/%d  loss %.4f  %.1f ms   ", def->name, model_mode_name(cfg->mode),
                    model_preset_name(cfg->preset), i + 1, o->steps, (double)loss, ms);
            fflush(o->progress);
        }
    }
    if (o->progress && r.steps)
        fputc('\n', o->progress);
    exec_trace_run_end((int32_t)s);
    r.mean_ms = r.steps > 1 ? rest / (r.steps - 1) : r.first_ms;
    r.mean_engine_ms = r.steps > 1 ? rest_engine / (r.steps - 1) : first_engine;
    if (!s && o->out) {
        if (json) {
            emit(o->out,
                 json_pack("{s:b, s:i, s:f, s:f, s:f, s:f, s:o, s:o}", "summary", 1, "steps", r.steps, "mean_ms",
                           r.mean_ms, "mean_engine_ms", r.mean_engine_ms, "first_ms", r.first_ms, "total_ms",
                           r.total_ms, "first_loss", loss_json(r.first_loss), "last_loss", loss_json(r.last_loss)));
        } else {
            /* the settings away from the defaults: a convolution algorithm
             * forced, threads bound, denormal floats kept */
            const exec_conv_algo algo =
                cfg->settings.conv_algo ? (exec_conv_algo)cfg->settings.conv_algo : exec_conv_algo_get();
            const exec_bind bind = cfg->settings.bind ? (exec_bind)cfg->settings.bind : exec_bind_get();
            char away[96];
            snprintf(away, sizeof away, "%s%s%s%s%s", algo == EXEC_CONV_AUTO ? "" : ", convolutions ",
                     algo == EXEC_CONV_AUTO ? "" : exec_conv_algo_name(algo), bind == EXEC_BIND_NONE ? "" : ", bound ",
                     bind == EXEC_BIND_NONE ? "" : exec_bind_name(bind),
                     exec_denormals_get() ? "" : ", denormals kept");
            fprintf(o->out, "%s %s (%s): batch %d, %lld parameters, %d thread%s, inter %u%s\n", def->name,
                    model_mode_name(cfg->mode), model_preset_name(cfg->preset), m->batch, (long long)r.params, threads,
                    threads == 1 ? "" : "s", info.inter, away);
            fprintf(o->out,
                    "%d steps, mean step %.2f ms, %.2f ms of it in the engine (first step skipped; first %.2f ms)",
                    r.steps, r.mean_ms, r.mean_engine_ms, r.first_ms);
            if (isfinite(r.first_loss))
                fprintf(o->out, ", loss %.4f -> %.4f", (double)r.first_loss, (double)r.last_loss);
            fputc('\n', o->out);
        }
    }
    model_destroy(m);
    if (res)
        *res = r;
    return s;
}
