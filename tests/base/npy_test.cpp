// .npy reading and writing: round trips for every supported dtype, zero-copy mapping, and a
// clear error for each kind of bad file.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>

#include "graphloom/base/error.h"
#include "graphloom/base/npy.h"
#include "support/test_support.h"

namespace graphloom {
namespace {

using testing::TempDir;

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A version 1.0 .npy image with the given header dict and `data_bytes` of payload.
std::string npy_image(const std::string& dict, std::size_t data_bytes) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string image("\x93NUMPY\x01\x00", 8);
  image.push_back(static_cast<char>(header.size() & 0xff));
  image.push_back(static_cast<char>(header.size() >> 8));
  return image + header + std::string(data_bytes, '\0');
}

std::string error_of(const std::filesystem::path& path) {
  try {
    load_npy(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Npy, RoundTripsEveryDtype) {
  TempDir dir;
  for (auto dtype :
       {at::kHalf, at::kFloat, at::kDouble, at::kChar, at::kByte, at::kInt, at::kLong, at::kBool}) {
    const at::Tensor original = (at::arange(12) % 5).to(dtype).view({3, 4});
    const auto path = dir / "a.npy";
    save_npy(path, original);
    for (bool memory_map : {true, false}) {
      const at::Tensor loaded = load_npy(path, memory_map);
      EXPECT_EQ(loaded.scalar_type(), dtype);
      EXPECT_EQ(loaded.sizes(), original.sizes());
      EXPECT_TRUE(at::equal(loaded, original)) << c10::toString(dtype);
    }
  }
}

TEST(Npy, OneDimensionalAndEmptyShapes) {
  TempDir dir;
  save_npy(dir / "v.npy", at::arange(7, at::kLong));
  EXPECT_EQ(load_npy(dir / "v.npy").sizes(), at::IntArrayRef({7}));
  save_npy(dir / "e.npy", at::empty({0, 3}, at::kFloat));
  EXPECT_EQ(load_npy(dir / "e.npy").sizes(), at::IntArrayRef({0, 3}));
  const NpyHeader header = read_npy_header(dir / "v.npy");
  EXPECT_EQ(header.data_offset % 64, 0u);
}

TEST(Npy, ReadsNumpyWrittenHeader) {
  TempDir dir;
  // Exactly what numpy 1.24 writes for np.save(f, np.arange(3, dtype=np.int32)).
  std::string image = npy_image("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 0);
  const int32_t values[3] = {5, -1, 7};
  image.append(reinterpret_cast<const char*>(values), sizeof(values));
  write_bytes(dir / "np.npy", image);
  const at::Tensor loaded = load_npy(dir / "np.npy");
  EXPECT_TRUE(at::equal(loaded, at::tensor({5, -1, 7}, at::kInt)));
}

TEST(Npy, MemoryMappedTensorIsCopyOnWrite) {
  TempDir dir;
  save_npy(dir / "a.npy", at::zeros({4}, at::kFloat));
  at::Tensor mapped = load_npy(dir / "a.npy", /*memory_map=*/true);
  mapped.fill_(3.0);  // must not reach the file
  EXPECT_TRUE(at::equal(load_npy(dir / "a.npy"), at::zeros({4}, at::kFloat)));
}

TEST(Npy, RejectsFortranOrder) {
  TempDir dir;
  write_bytes(dir / "f.npy",
              npy_image("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16));
  const std::string error = error_of(dir / "f.npy");
  EXPECT_NE(error.find("Fortran"), std::string::npos) << error;
  EXPECT_NE(error.find("f.npy"), std::string::npos) << error;
}

TEST(Npy, RejectsUnsupportedDtypes) {
  TempDir dir;
  write_bytes(dir / "c.npy",
              npy_image("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16));
  EXPECT_NE(error_of(dir / "c.npy").find("unsupported dtype '<c8'"), std::string::npos);
  write_bytes(dir / "b.npy",
              npy_image("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8));
  EXPECT_NE(error_of(dir / "b.npy").find("unsupported dtype '>f4'"), std::string::npos);
}

TEST(Npy, RejectsTruncatedData) {
  TempDir dir;
  write_bytes(dir / "t.npy",
              npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }", 79));
  const std::string error = error_of(dir / "t.npy");
  EXPECT_NE(error.find("needs 80 bytes, the file holds 79 (truncated?)"), std::string::npos)
      << error;
  EXPECT_NE(error.find("t.npy"), std::string::npos);
}

TEST(Npy, RejectsExtraData) {
  TempDir dir;
  write_bytes(dir / "x.npy",
              npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", 9));
  EXPECT_NE(error_of(dir / "x.npy").find("data size mismatch"), std::string::npos);
}

TEST(Npy, RejectsShapesWhoseByteCountOverflows) {
  TempDir dir;
  // 2^61 + 1 int64 elements: the byte count wraps to 8 in 64 bits.
  write_bytes(
      dir / "o.npy",
      npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (2305843009213693953,), }", 8));
  EXPECT_NE(error_of(dir / "o.npy").find("too large"), std::string::npos)
      << error_of(dir / "o.npy");
  write_bytes(
      dir / "s.npy",
      npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
                8));
  EXPECT_NE(error_of(dir / "s.npy").find("out of range"), std::string::npos);
}

TEST(Npy, RejectsTruncatedHeaderAndBadMagic) {
  TempDir dir;
  write_bytes(
      dir / "h.npy",
      npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", 8).substr(0, 30));
  EXPECT_NE(error_of(dir / "h.npy").find("truncated or oversized .npy header"), std::string::npos);
  write_bytes(dir / "m.npy", "PK\x03\x04 this is a zip file");
  EXPECT_NE(error_of(dir / "m.npy").find("is not a .npy file"), std::string::npos);
  EXPECT_NE(error_of(dir / "missing.npy").find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace graphloom
