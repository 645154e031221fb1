/* optable.c -- the op table, expanded from ops.def, and the name tables. */
#include "internal.h"

#define GRAD_FN_GRAD(name) op_grad_##name
#define GRAD_FN_NOGRAD(name) NULL

const exec_op_info exec_op_table[EXEC_OP_COUNT] = {
#define X(op_, cls_, nin_, nout_, cost_, grad_, attrs_, words_) \
    [EXEC_OP_##op_] = { .name = #op_,                           \
                        .cls = EXEC_CLASS_##cls_,               \
                        .nin = nin_,                            \
                        .nout = nout_,                          \
                        .attrs = attrs_,                        \
                        .flops = words_,                        \
                        .shape = op_shape_##op_,                \
                        .fwd = op_fwd_##op_,                    \
                        .cost = cost_,                          \
                        .grad = GRAD_FN_##grad_(op_) },
#include "ops.def"
#undef X
};

/* Every row must name a class, a cost and GRAD or NOGRAD: a row with a
 * column missing does not expand (wrong macro arity), an unknown class or
 * grad kind is an undeclared name, a row naming no function does not link;
 * and the table has exactly one entry per op. */
#define X(name, cls, nin, nout, cost, grad, attrs, words)                    \
    static_assert(EXEC_CLASS_##cls < EXEC_CLASS_COUNT, #name ": bad class"); \
    static_assert((nin) >= -1 && (nout) >= -2, #name ": bad arity");
#include "ops.def"
#undef X
static_assert(sizeof exec_op_table / sizeof exec_op_table[0] == EXEC_OP_COUNT, "op table out of sync");

static const char *const class_names[] = {
#define X(name, desc) #name,
#include "op_class.def"
#undef X
};
static_assert(sizeof class_names / sizeof class_names[0] == EXEC_CLASS_COUNT, "class table out of sync");

static const char *const role_names[] = {
#define X(name) #name,
#include "role.def"
#undef X
};
static_assert(sizeof role_names / sizeof role_names[0] == EXEC_ROLE_COUNT, "role table out of sync");

static const char *const phase_names[] = { "forward", "backward", "update" };
static_assert(sizeof phase_names / sizeof phase_names[0] == EXEC_PHASE_COUNT, "phase table out of sync");

static const char *const dtype_names[] = { "float32", "int32" };
static_assert(sizeof dtype_names / sizeof dtype_names[0] == EXEC_DTYPE_COUNT, "dtype table out of sync");

static const char *const mode_names[] = { "train", "infer" };
static_assert(sizeof mode_names / sizeof mode_names[0] == EXEC_MODE_COUNT, "mode table out of sync");

const char *exec_op_name(exec_op op) { return (unsigned)op < EXEC_OP_COUNT ? exec_op_table[op].name : "?"; }
const char *exec_class_name(exec_class c) { return (unsigned)c < EXEC_CLASS_COUNT ? class_names[c] : "?"; }
const char *exec_role_name(exec_role r) { return (unsigned)r < EXEC_ROLE_COUNT ? role_names[r] : "?"; }
const char *exec_phase_name(exec_phase p) { return (unsigned)p < EXEC_PHASE_COUNT ? phase_names[p] : "?"; }
const char *exec_dtype_name(exec_dtype t) { return (unsigned)t < EXEC_DTYPE_COUNT ? dtype_names[t] : "?"; }
const char *exec_mode_name(exec_mode m) { return (unsigned)m < EXEC_MODE_COUNT ? mode_names[m] : "?"; }

int exec_op_from_name(const char *name)
{
    for (int i = 0; i < EXEC_OP_COUNT; i++)
        if (strcmp(exec_op_table[i].name, name) == 0)
            return i;
    return -1;
}

void exec_node_cost(const exec_graph *g, const exec_node *n, uint64_t *flops, uint64_t *bytes)
{
    exec_op_table[n->op].cost(g, n, flops, bytes);
}
