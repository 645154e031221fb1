/* kernel_table.c -- the forward column of the op table as one array.
 *
 * exec/CMakeLists.txt compiles the kernel files whose speed depends on the
 * instruction set (ISA_KERNELS there) and this file once for the baseline
 * and once for each vector set (AVX2, AVX-512), and gives each extra copy's
 * symbols a suffix: exec_kernels_avx2 holds op_fwd_Relu_avx2 and the like
 * for those files' ops and the one baseline function for every other op.
 * exec/isa.c picks the array for this CPU. */
#include "../internal.h"

const exec_fwd_fn exec_kernels[EXEC_OP_COUNT] = {
#define X(op_, cls_, nin_, nout_, cost_, grad_, attrs_, words_) [EXEC_OP_##op_] = op_fwd_##op_,
#include "../ops.def"
#undef X
};
