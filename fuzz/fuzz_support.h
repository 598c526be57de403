// What the fuzz targets share: a scratch directory of the process's own, small valid inputs to
// mutate around (a dataset, a partition), and the rule every decoder must keep: bad input ends
// in a graphloom::Error, anything else (another exception, a crash, a sanitizer report) is a
// finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "graphloom/base/error.h"

namespace graphloom::fuzz {

// A directory of this process's own, removed at exit.
const std::filesystem::path& scratch_dir();

void write_file(const std::filesystem::path& path, std::string_view bytes);

// The input cut at its '\0' bytes into exactly `parts` pieces (missing ones empty, the last
// one taking the rest): several files from one input.
std::vector<std::string_view> split_input(const uint8_t* data, std::size_t size, std::size_t parts);

// A 60-node planted dataset written once into the scratch directory; returns its path.
const std::filesystem::path& tiny_dataset();
// tiny_dataset() in 2 random parts; returns the partition directory.
const std::filesystem::path& tiny_partition();

// Runs `decode`; a graphloom::Error is the expected answer to bad input.
template <class Decode>
void expect_clean_rejection(Decode&& decode) {
  try {
    decode();
  } catch (const graphloom::Error&) {
  }
}

}  // namespace graphloom::fuzz
