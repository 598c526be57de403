// numpy `.npy` files as at::Tensor: read memory-mapped (no copy) and written atomically.
// Supported: little-endian f16/f32/f64/i8/u8/i32/i64/bool, C order, format versions 1-3.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace graphloom {

struct NpyHeader {
  at::ScalarType dtype;
  std::vector<int64_t> shape;
  std::size_t data_offset;  // bytes from the start of the file to the first element
};

// Parses and validates the header of an in-memory `.npy` image of `file_size` bytes; `path` is
// only used in error messages. Rejects Fortran order, unsupported dtypes and a data size that
// does not match the shape.
// `readable` bytes of `data` may be read (default: the whole file); a header longer than that
// is an error rather than a read past the buffer.
NpyHeader parse_npy_header(const std::byte* data, std::size_t file_size,
                           const std::filesystem::path& path, std::size_t readable = SIZE_MAX);

// Loads `path`. With `memory_map` the tensor points into a private file mapping that lives as
// long as the tensor (zero copy); otherwise the data is read into an owned tensor (on huge
// pages from 2 MB up, see huge_pages.h).
at::Tensor load_npy(const std::filesystem::path& path, bool memory_map = true);

// Reads only the header (dtype and shape) without mapping the data.
NpyHeader read_npy_header(const std::filesystem::path& path);

// Writes `tensor` (made contiguous) to `path`: first to a temporary name, renamed when complete.
void save_npy(const std::filesystem::path& path, const at::Tensor& tensor);

}  // namespace graphloom
