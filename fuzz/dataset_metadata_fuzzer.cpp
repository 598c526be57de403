// metadata.json of the dataset directory format: the input replaces the metadata of a small
// valid dataset, whose .npy files stay, and the dataset is loaded (also with --strict).
#include "fuzz_support.h"
#include "graphloom/io/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace fuzz = graphloom::fuzz;
  const std::filesystem::path& dir = fuzz::tiny_dataset();
  fuzz::write_file(dir / "metadata.json",
                   std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_clean_rejection([&] { graphloom::io::load_dataset(dir); });
  fuzz::expect_clean_rejection([&] { graphloom::io::load_dataset(dir, {.strict = true}); });
  return 0;
}
