# Optional CUDA backend (docs/cuda.md, MACHINE.md §8). TREX_CUDA=ON (default) builds it when a CUDA compiler
# (nvcc) is found and says so at configure time; without one, or with -DTREX_CUDA=OFF, trex builds CPU-only: the
# device layer then reports "built without CUDA" and neither the kernels nor the gpu tests are built.
# Sets TREX_CUDA_FOUND (ON/OFF) for src/cuda/ and tests/cuda/.
option(TREX_CUDA "Build the CUDA backend when nvcc is found (docs/cuda.md)" ON)
set(TREX_CUDA_FOUND OFF)
if(TREX_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # H200 (sm_90) by default; must be set before enable_language (CUDA 13 dropped sm < 75).
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA20 flags for nvcc; the kernels need only C++17
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
    if(TREX_CCACHE)
      set(CMAKE_CUDA_COMPILER_LAUNCHER ${TREX_CCACHE})
    endif()
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND NOT (TARGET CUDA::cudart_static AND TARGET CUDA::cublasLt))
    message(STATUS "trex: CUDA backend OFF: nvcc found but the CUDA toolkit's static runtime or cuBLASLt is missing; "
                   "the CUDA sources and the gpu tests are not built")
  elseif(CMAKE_CUDA_COMPILER)
    # NCCL ships inside the CUDA tree here (/usr/local/cuda/lib); found for the multi-GPU process group (later).
    find_library(TREX_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib)
    find_path(TREX_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(TREX_NCCL_LIBRARY AND TREX_NCCL_INCLUDE AND NOT TARGET nccl::nccl)
      add_library(nccl::nccl UNKNOWN IMPORTED)
      set_target_properties(nccl::nccl PROPERTIES IMPORTED_LOCATION ${TREX_NCCL_LIBRARY}
                            INTERFACE_INCLUDE_DIRECTORIES ${TREX_NCCL_INCLUDE})
    endif()
    set(TREX_CUDA_FOUND ON)
    message(STATUS "trex: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, sm_${CMAKE_CUDA_ARCHITECTURES}; "
                   "CUDA sources and the gpu-labelled tests are built; they skip without a device)")
  else()
    message(STATUS "trex: CUDA backend OFF: no CUDA compiler (nvcc) found; the CUDA sources and the gpu tests are "
                   "not built")
  endif()
else()
  message(STATUS "trex: CUDA backend OFF (-DTREX_CUDA=OFF); the CUDA sources and the gpu tests are not built")
endif()
