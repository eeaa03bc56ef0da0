# Compiler support shared by the kernels' C loops.
#
# KERNEL_CLONES asks GCC (and Clang) to compile a loop twice, for AVX2 and for the
# baseline x86-64 target, and to pick one when the module loads. setup.py builds
# with plain -O3 for portable wheels; without this, the loops would never use more
# than SSE2. Elsewhere (ARM, MSVC, musl) it expands to nothing.

cdef extern from *:
    """
    #if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && defined(__has_attribute)
    #  if __has_attribute(target_clones)
    #    define KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
    #  endif
    #endif
    #ifndef KERNEL_CLONES
    #  define KERNEL_CLONES
    #endif
    """
