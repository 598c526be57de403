# libtorch from the project's Python environment (.venv, made by scripts/install-deps.sh), so
# that the C++ build and `import torch` in the same process are one torch. Sets up:
#   - find_package(Torch) on that torch's CMake prefix (GRAPHLOOM_PYTHON picks another Python;
#     a Torch_DIR given on the command line wins);
#   - graphloom_openmp: -fopenmp against the wheel's own libgomp, so graphloom's OpenMP loops and
#     ATen's at::parallel_for run on one OpenMP runtime and one thread pool;
#   - graphloom_system_first: an include directory that puts Debian's fmt and protobuf headers
#     ahead of the copies the wheel ships in its include folder (docs/toolchain.md).
set(GRAPHLOOM_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH
    "Python interpreter whose torch graphloom builds on")
# `pip install .` (scikit-build-core) builds for the interpreter that runs it.
if(DEFINED SKBUILD AND DEFINED Python_EXECUTABLE)
  set(GRAPHLOOM_PYTHON "${Python_EXECUTABLE}" CACHE FILEPATH
      "Python interpreter whose torch graphloom builds on" FORCE)
endif()

if(NOT Torch_DIR)
  execute_process(
    COMMAND "${GRAPHLOOM_PYTHON}" -c
            "import os, sys, torch; sys.stdout.write(torch.utils.cmake_prefix_path + ';' + os.path.dirname(torch.__file__))"
    OUTPUT_VARIABLE torch_prefix ERROR_VARIABLE torch_error RESULT_VARIABLE torch_status)
  if(NOT torch_status EQUAL 0)
    message(FATAL_ERROR "graphloom: cannot import torch with ${GRAPHLOOM_PYTHON} (${torch_error}). "
                        "Run scripts/install-deps.sh to make .venv, or pass -DGRAPHLOOM_PYTHON=... "
                        "or -DTorch_DIR=...")
  endif()
  # The torch folder itself too: TorchConfig's find_library calls then take its lib/ before
  # a libtorch in the system's folders (Debian's libtorch-dev, if installed).
  list(PREPEND CMAKE_PREFIX_PATH ${torch_prefix})
  # A CUDA wheel's TorchConfig looks for libnvrtc in the CUDA toolkit, which here lacks it; the
  # wheel carries its own beside its CUDA runtime (site-packages/nvidia/cu13/lib).
  list(GET torch_prefix 1 torch_dir)
  file(GLOB wheel_nvrtc "${torch_dir}/../nvidia/cu*/lib/libnvrtc.so.*[0-9]")
  if(wheel_nvrtc AND NOT CUDA_nvrtc_LIBRARY)
    list(GET wheel_nvrtc 0 wheel_nvrtc)
    set(CUDA_nvrtc_LIBRARY "${wheel_nvrtc}" CACHE FILEPATH "libnvrtc of the CUDA wheel")
  endif()
endif()
# A CUDA wheel's TorchConfig finds the CUDA toolkit from nvcc's folder, and /usr/local/bin/nvcc
# may be a wrapper script outside it: name the toolkit itself (CUDA_HOME, else /usr/local/cuda).
# A CPU wheel ignores these.
if(NOT CUDA_TOOLKIT_ROOT_DIR)
  set(cuda_home "/usr/local/cuda")
  if(DEFINED ENV{CUDA_HOME})
    set(cuda_home "$ENV{CUDA_HOME}")
  endif()
  if(EXISTS "${cuda_home}/bin/nvcc")
    set(CUDA_TOOLKIT_ROOT_DIR "${cuda_home}" CACHE PATH "The CUDA toolkit")
    set(CUDAToolkit_ROOT "${cuda_home}")
    if(NOT CMAKE_CUDA_COMPILER)
      set(CMAKE_CUDA_COMPILER "${cuda_home}/bin/nvcc" CACHE FILEPATH "nvcc")
    endif()
  endif()
endif()
# Without a list TorchConfig probes the machine's GPUs with a test program, which fails on a
# machine without one and under C++20; graphloom's own kernels take GRAPHLOOM_CUDA_ARCHITECTURES.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
find_package(Torch REQUIRED)
message(STATUS "graphloom: libtorch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX}")

# One OpenMP runtime. The wheel carries libgomp.so.1 next to libtorch_cpu; linking our code to
# that file (not GCC's) makes the link fail if our objects need an OpenMP symbol it lacks, and
# the binaries' RUNPATH finds it first, so GCC's libgomp is never loaded beside it.
find_package(OpenMP REQUIRED)
add_library(graphloom_openmp INTERFACE)
find_library(GRAPHLOOM_TORCH_GOMP NAMES libgomp.so.1 PATHS "${TORCH_INSTALL_PREFIX}/lib" NO_DEFAULT_PATH)
if(GRAPHLOOM_TORCH_GOMP)
  target_compile_options(graphloom_openmp INTERFACE ${OpenMP_CXX_FLAGS})
  target_link_libraries(graphloom_openmp INTERFACE "${GRAPHLOOM_TORCH_GOMP}" Threads::Threads)
else()
  # A libtorch without a bundled OpenMP (a source build, a distribution's package) uses the
  # compiler's, which is then also libtorch's.
  target_link_libraries(graphloom_openmp INTERFACE OpenMP::OpenMP_CXX)
endif()

# The wheel's include folder holds its own fmt (12.x) and protobuf (3.13) headers. Debian's
# spdlog is built on Debian's fmt, and gRPC's generated code on Debian's protobuf: links to them
# in a directory searched before the wheel's make `#include <fmt/...>` and
# `#include <google/protobuf/...>` find Debian's copies in every translation unit.
set(system_first "${PROJECT_BINARY_DIR}/system-first-include")
file(MAKE_DIRECTORY "${system_first}/google")
get_target_property(fmt_include fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
list(GET fmt_include 0 fmt_include)
file(CREATE_LINK "${fmt_include}/fmt" "${system_first}/fmt" SYMBOLIC)
list(GET Protobuf_INCLUDE_DIRS 0 protobuf_include)
file(CREATE_LINK "${protobuf_include}/google/protobuf" "${system_first}/google/protobuf" SYMBOLIC)
add_library(graphloom_system_first INTERFACE)
target_include_directories(graphloom_system_first SYSTEM BEFORE INTERFACE "${system_first}")
# error.h asserts that every translation unit sees exactly this fmt.
string(REPLACE "." ";" fmt_parts "${fmt_VERSION}")
list(GET fmt_parts 0 fmt_major)
list(GET fmt_parts 1 fmt_minor)
list(GET fmt_parts 2 fmt_patch)
math(EXPR fmt_number "${fmt_major} * 10000 + ${fmt_minor} * 100 + ${fmt_patch}")
target_compile_definitions(graphloom_system_first INTERFACE GRAPHLOOM_FMT_VERSION=${fmt_number})
