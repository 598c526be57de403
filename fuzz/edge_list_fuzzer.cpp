// Edge-list lines: the first byte picks the options (delimiter, header, weights, a node count
// of 1-16), the rest is the file. The count is always given: without it the largest id sets
// the node count, and an id of 10^9 is a graph of 10^9 nodes (refused only beyond the memory
// available, which is more than a fuzzer may allocate).
#include "fuzz_support.h"
#include "graphloom/io/importers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace fuzz = graphloom::fuzz;
  if (size == 0) return 0;
  const uint8_t choice = data[0];
  const std::filesystem::path file = fuzz::scratch_dir() / "edges.txt";
  fuzz::write_file(file, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  static constexpr char kDelimiters[] = {0, ',', '\t', ' '};
  const graphloom::io::EdgeListOptions options{.delimiter = kDelimiters[choice & 3],
                                               .header = (choice & 4) != 0,
                                               .weighted = (choice & 8) != 0,
                                               .num_nodes = 1 + (choice >> 4)};
  fuzz::expect_clean_rejection([&] { graphloom::io::import_edge_list(file, options); });
  return 0;
}
