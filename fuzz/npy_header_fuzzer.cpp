// `.npy` headers: magic, version, header length, the dict's dtype, order and shape, and the
// data size they imply against the file's.
#include "fuzz_support.h"
#include "graphloom/base/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  graphloom::fuzz::expect_clean_rejection(
      [&] { graphloom::parse_npy_header(bytes, size, "fuzz.npy"); });
  // A header that claims more than the readable prefix must be refused, not read past it.
  graphloom::fuzz::expect_clean_rejection(
      [&] { graphloom::parse_npy_header(bytes, size, "fuzz.npy", size / 2); });
  return 0;
}
