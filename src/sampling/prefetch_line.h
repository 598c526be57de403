// A software prefetch that the compiler keeps, internal to the sampling kernels.
#pragma once

namespace graphloom::sampling {

// Starts loading the cache line holding `address` for reading. GCC at -O3 deleted a loop whose
// only effect was __builtin_prefetch (the loop drew the addresses from a copy of a random
// stream, and nothing else survived the loop); an asm statement with a memory operand stays.
inline void prefetch_line(const void* address) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address);
#endif
}

}  // namespace graphloom::sampling
