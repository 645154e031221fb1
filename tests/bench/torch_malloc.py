"""torch_malloc.py -- PyTorch's CPU allocator in its steady state, for the
benchmarks that time PyTorch next to fathom (bench_models.py, torch_seq.py).

PyTorch on CPU takes every activation and scratch buffer from malloc. With
glibc's defaults, a buffer above the mmap threshold (128 KiB at start, raised
as large blocks are freed) is mapped and unmapped on each call and every step
pays its page faults. How far the threshold has risen depends on what the
process ran before: measured on the 2-core EPYC VM, vgg small inference took
34 ms a step as the first cell of a process and 8.8 ms after a training
cell. steady() sets glibc's mmap and trim thresholds to 1 GiB (mallopt, as
MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ would), so that freed
buffers are reused from the heap: the effect of the jemalloc or tcmalloc
that PyTorch's CPU performance guide recommends. fathom plans its tensors
once and does not allocate during a step."""
import ctypes

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3


def steady():
    """Returns None, or a one-line reason the thresholds could not be set."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError as e:
        return f"cannot load libc.so.6: {e}"
    for name, opt in (("M_MMAP_THRESHOLD", M_MMAP_THRESHOLD), ("M_TRIM_THRESHOLD", M_TRIM_THRESHOLD)):
        if libc.mallopt(opt, 1 << 30) != 1:
            return f"mallopt({name}, 1 GiB) refused"
    return None
