// Hot loops compiled for several x86-64 levels, the best one for the running CPU picked once at
// load time (GCC's target_clones, through an ifunc). Debian's compiler targets baseline x86-64
// (SSE2, no FMA); the aggregation and dropout loops ran ~1.6x faster compiled for AVX-512 on
// this machine, and `bench train --data er` ~9% faster, without making the binary unportable.
// Mark leaf functions only: the body of an OpenMP parallel region is outlined into a function of
// its own that would not be cloned, so call a marked function from inside the region instead.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GRAPHLOOM_CPU_DISPATCH \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GRAPHLOOM_CPU_DISPATCH
#endif
