# The CUDA build (issue 46): GRAPHLOOM_CUDA=AUTO (the default) compiles graphloom's CUDA code
# when the torch it builds on is a CUDA build (e.g. `GRAPHLOOM_PYTHON=.venv-cuda/bin/python`,
# torch 2.14.1+cu130) and nvcc is found; ON requires both; OFF never. A CUDA build runs on a
# machine without a GPU: its CUDA paths then refuse by name and everything else runs on the CPU.
# Sets GRAPHLOOM_WITH_CUDA and, when on, the target graphloom_cuda_runtime (torch's CUDA
# libraries and the CUDA runtime that torch loads).
set(GRAPHLOOM_CUDA AUTO CACHE STRING "Build the CUDA code: AUTO, ON or OFF")
set_property(CACHE GRAPHLOOM_CUDA PROPERTY STRINGS AUTO ON OFF)
# The check machine is an H200 (sm_90); sm_80 covers A100s. PTX of the newest is embedded too.
set(GRAPHLOOM_CUDA_ARCHITECTURES "80-real;90" CACHE STRING "CUDA architectures of the kernels")

set(GRAPHLOOM_WITH_CUDA OFF)
if(NOT GRAPHLOOM_CUDA STREQUAL "OFF")
  if(TARGET torch_cuda AND TARGET c10_cuda)
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      set(GRAPHLOOM_WITH_CUDA ON)
    elseif(GRAPHLOOM_CUDA STREQUAL "ON")
      message(FATAL_ERROR "GRAPHLOOM_CUDA=ON: no nvcc found (put it on PATH or set CMAKE_CUDA_COMPILER)")
    endif()
  elseif(GRAPHLOOM_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GRAPHLOOM_CUDA=ON: the torch of ${GRAPHLOOM_PYTHON} is not a CUDA build "
                        "(scripts/install-deps.sh --cuda makes .venv-cuda with torch 2.14.1+cu130)")
  endif()
endif()

if(GRAPHLOOM_WITH_CUDA)
  enable_language(CUDA)
  # CMake 3.25 (Debian 12) has no C++20 dialect for nvcc. The kernels need none: they include
  # only the CUDA runtime (ATen, which needs C++20, stays in the host files g++ compiles).
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  add_library(graphloom_cuda_runtime INTERFACE)
  # --no-as-needed: torch_cuda registers the CUDA hooks (device counts, pinned memory) only when
  # loaded, and nothing of graphloom's names one of its symbols.
  target_link_libraries(graphloom_cuda_runtime INTERFACE
    "-Wl,--no-as-needed,$<TARGET_FILE:torch_cuda>" -Wl,--as-needed torch_cuda c10_cuda torch::cudart)
  message(STATUS "graphloom: CUDA code on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures "
                 "${GRAPHLOOM_CUDA_ARCHITECTURES})")
else()
  message(STATUS "graphloom: CUDA code off (GRAPHLOOM_CUDA=${GRAPHLOOM_CUDA})")
endif()
