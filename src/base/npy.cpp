// `.npy` header parsing (numpy's format spec, versions 1.0-3.0) and tensor (de)serialization.
#include "graphloom/base/npy.h"
#include "graphloom/base/dtype.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>

#include "graphloom/base/atomic_output.h"
#include "graphloom/base/error.h"
#include "graphloom/base/huge_pages.h"
#include "graphloom/base/mapped_file.h"

namespace graphloom {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

struct DtypeName {
  const char* descr;
  at::ScalarType dtype;
};
constexpr DtypeName kDtypes[] = {
    {"<f2", at::kHalf},
    {"<f4", at::kFloat},
    {"<f8", at::kDouble},
    {"|i1", at::kChar},
    {"|u1", at::kByte},
    {"<i4", at::kInt},
    {"<i8", at::kLong},
    {"|b1", at::kBool},
    // numpy has no bfloat16; ml_dtypes saves it as a 2-byte void, which is how we write it too.
    {"|V2", at::kBFloat16},
};

at::ScalarType dtype_from_descr(const std::string& descr, const std::filesystem::path& path) {
  for (const auto& entry : kDtypes) {
    if (descr == entry.descr) return entry.dtype;
  }
  // numpy writes single-byte types with '|', but '<' and '=' are legal spellings of them too.
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=')) {
    std::string alt = descr;
    alt[0] = '|';
    for (const auto& entry : kDtypes) {
      if (alt == entry.descr) return entry.dtype;
    }
  }
  GL_THROW(
      "'{}': unsupported dtype '{}' (expected little-endian float16/32/64, bfloat16 (V2), int8, "
      "uint8, int32, int64 or bool)",
      path.string(), descr);
}

const char* descr_from_dtype(at::ScalarType dtype) {
  for (const auto& entry : kDtypes) {
    if (entry.dtype == dtype) return entry.descr;
  }
  GL_THROW("cannot write dtype {} to .npy", dtype_name(dtype));
}

std::string header_field(const std::string& header, const std::string& key,
                         const std::string& value_pattern, const std::filesystem::path& path) {
  const std::regex pattern("['\"]" + key + "['\"]\\s*:\\s*" + value_pattern);
  std::smatch match;
  GL_CHECK(std::regex_search(header, match, pattern), "'{}': malformed .npy header, no '{}' in {}",
           path.string(), key, header);
  return match[1].str();
}

}  // namespace

NpyHeader parse_npy_header(const std::byte* data, std::size_t file_size,
                           const std::filesystem::path& path, std::size_t readable) {
  readable = std::min(readable, file_size);
  GL_CHECK(file_size >= 10 && std::memcmp(data, kMagic, kMagicSize) == 0,
           "'{}' is not a .npy file (missing the \\x93NUMPY magic)", path.string());
  const auto major = static_cast<uint8_t>(data[6]);
  std::size_t header_len = 0;
  std::size_t prefix = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(data[8]) | (static_cast<uint8_t>(data[9]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    GL_CHECK(file_size >= 12, "'{}': truncated .npy header", path.string());
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<uint8_t>(data[8 + i]);
    prefix = 12;
  } else {
    GL_THROW("'{}': unsupported .npy format version {} (expected 1, 2 or 3)", path.string(), major);
  }
  GL_CHECK(prefix + header_len <= readable,
           "'{}': truncated or oversized .npy header ({} header bytes announced, {} available)",
           path.string(), header_len, readable);
  const std::string header(reinterpret_cast<const char*>(data) + prefix, header_len);

  NpyHeader result{};
  result.dtype = dtype_from_descr(header_field(header, "descr", "['\"]([^'\"]*)['\"]", path), path);
  const std::string fortran = header_field(header, "fortran_order", "(True|False)", path);
  GL_CHECK(fortran == "False",
           "'{}': Fortran-order arrays are not supported (save with np.ascontiguousarray)",
           path.string());
  const std::string shape_text = header_field(header, "shape", "\\(([^)]*)\\)", path);
  static const std::regex number("\\d+");
  for (auto it = std::sregex_iterator(shape_text.begin(), shape_text.end(), number);
       it != std::sregex_iterator(); ++it) {
    try {
      result.shape.push_back(std::stoll(it->str()));
    } catch (const std::out_of_range&) {
      GL_THROW("'{}': .npy shape entry '{}' is out of range", path.string(), it->str());
    }
  }
  result.data_offset = prefix + header_len;

  // The product is checked for overflow: a wrapped product could match a small file.
  std::size_t expected = c10::elementSize(result.dtype);
  for (const int64_t dim : result.shape) {
    const auto d = static_cast<std::size_t>(dim);
    GL_CHECK(d == 0 || expected <= SIZE_MAX / d, "'{}': .npy shape ({}) is too large",
             path.string(), fmt::join(result.shape, ", "));
    expected *= d;
  }
  const std::size_t actual = file_size - result.data_offset;
  GL_CHECK(actual == expected,
           "'{}': data size mismatch: shape ({}) of {} needs {} bytes, the file holds {}{}",
           path.string(), fmt::join(result.shape, ", "), dtype_name(result.dtype), expected, actual,
           actual < expected ? " (truncated?)" : "");
  return result;
}

NpyHeader read_npy_header(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  GL_CHECK(in.good(), "cannot open '{}'", path.string());
  std::vector<std::byte> head(1 << 16);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  const auto file_size = std::filesystem::file_size(path);
  // Parse against the real file size: pretend the header buffer is the file's prefix.
  GL_CHECK(in.gcount() >= 10, "'{}' is not a .npy file (only {} bytes)", path.string(),
           in.gcount());
  return parse_npy_header(head.data(), file_size, path, static_cast<std::size_t>(in.gcount()));
}

at::Tensor load_npy(const std::filesystem::path& path, bool memory_map) {
  if (!memory_map) {
    // Read, not mapped and cloned: the clone would hold the file's pages and the copy at once.
    const NpyHeader header = read_npy_header(path);
    at::Tensor tensor = empty_on_huge_pages(header.shape, header.dtype);
    std::ifstream in(path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(header.data_offset));
    const auto bytes = static_cast<std::streamsize>(tensor.nbytes());
    in.read(static_cast<char*>(tensor.data_ptr()), bytes);
    GL_CHECK(in.gcount() == bytes, "'{}': read {} of {} data bytes", path.string(), in.gcount(),
             bytes);
    return tensor;
  }
  auto file = MappedFile::open(path);
  const NpyHeader header = parse_npy_header(file->data(), file->size(), path);
  auto options = at::TensorOptions().dtype(header.dtype);
  if (header.data_offset == file->size()) return at::empty(header.shape, options);
  void* data = file->mutable_data() + header.data_offset;
  auto mapped = at::from_blob(
      data, header.shape, [file](void*) mutable { file.reset(); }, options);
  return mapped;
}

void save_npy(const std::filesystem::path& path, const at::Tensor& tensor) {
  const at::Tensor data = tensor.contiguous().cpu();
  // numpy spells shapes as Python tuples: "()", "(3,)", "(3, 4)".
  std::string shape = fmt::format("{}", fmt::join(data.sizes(), ", "));
  if (data.dim() == 1) shape += ",";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                   descr_from_dtype(data.scalar_type()), shape);
  // Pad with spaces so that magic + length + header + '\n' is a multiple of 64 bytes.
  const std::size_t prefix = header.size() + 1 + 10 < 65536 ? 10 : 12;
  const std::size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.resize(total - prefix - 1, ' ');
  header.push_back('\n');

  AtomicFile out(path);
  std::string preamble(kMagic, kMagicSize);
  preamble.push_back(static_cast<char>(prefix == 10 ? 1 : 2));
  preamble.push_back(0);
  const std::size_t len = header.size();
  preamble.push_back(static_cast<char>(len & 0xff));
  preamble.push_back(static_cast<char>((len >> 8) & 0xff));
  if (prefix == 12) {
    preamble.push_back(static_cast<char>((len >> 16) & 0xff));
    preamble.push_back(static_cast<char>((len >> 24) & 0xff));
  }
  out.write(preamble.data(), preamble.size());
  out.write(header.data(), header.size());
  out.write(data.data_ptr(), data.nbytes());
  out.commit();
}

}  // namespace graphloom
