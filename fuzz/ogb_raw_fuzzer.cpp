// OGB node-property raw directories: the input, cut at '\0' bytes, is num-node-list.csv,
// edge.csv, node-label.csv, node-feat.csv and the train, valid and test split files (plain
// text under the .csv.gz names: zlib reads both).
#include <iterator>

#include "fuzz_support.h"
#include "graphloom/io/importers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace fuzz = graphloom::fuzz;
  namespace fs = std::filesystem;
  static const fs::path dir = fuzz::scratch_dir() / "ogb";
  static const char* kFiles[] = {"raw/num-node-list.csv.gz", "raw/edge.csv.gz",
                                 "raw/node-label.csv.gz",    "raw/node-feat.csv.gz",
                                 "split/s/train.csv.gz",     "split/s/valid.csv.gz",
                                 "split/s/test.csv.gz"};
  fs::create_directories(dir / "raw");
  fs::create_directories(dir / "split" / "s");
  const auto pieces = fuzz::split_input(data, size, std::size(kFiles));
  // A declared node count is honoured (a graph of 10^9 nodes is allocated as one): inputs that
  // declare more than 99,999 nodes are left out, so that the parsers, not the allocator, are
  // what runs.
  int digits = 0;
  for (const char c : pieces[0]) {
    digits = (c >= '0' && c <= '9') ? digits + 1 : 0;
    if (digits > 5) return 0;
  }
  for (std::size_t i = 0; i < std::size(kFiles); ++i) {
    // An empty piece leaves the optional files out (features, labels).
    if (pieces[i].empty() && i >= 2 && i <= 3) {
      fs::remove(dir / kFiles[i]);
    } else {
      fuzz::write_file(dir / kFiles[i], pieces[i]);
    }
  }
  fuzz::expect_clean_rejection([&] { graphloom::io::import_ogb_node_dataset(dir, ""); });
  return 0;
}
