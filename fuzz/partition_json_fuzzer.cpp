// partition.json: the input replaces the description of a small valid partition, which is
// then read and its part 0 loaded (the part files stay valid).
#include "fuzz_support.h"
#include "graphloom/partition/partition_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace fuzz = graphloom::fuzz;
  const std::filesystem::path& dir = fuzz::tiny_partition();
  fuzz::write_file(dir / "partition.json",
                   std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_clean_rejection([&] {
    const graphloom::partition::PartitionInfo info = graphloom::partition::read_partition_info(dir);
    for (int64_t part = 0; part < std::min<int64_t>(info.num_parts, 2); ++part) {
      graphloom::partition::load_partition(dir, part);
    }
  });
  return 0;
}
