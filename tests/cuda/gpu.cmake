# gpu-labelled tests of the CUDA backend (included by tests/CMakeLists.txt in CUDA builds only): the op-check
# harness (gpu/op_check.*, gpu/op_cases.*, gpu/optimizer_*), its GoogleTest driver trex_cuda_gpu_tests (every test
# SKIPPED with the reason without a device) and its perf driver trex_cuda_op_perf (scripts/gpu-check.sh; not a
# ctest).
if(NOT DEFINED TREX_TESTS_DIR)
  set(TREX_TESTS_DIR ${CMAKE_CURRENT_SOURCE_DIR})  # tests/ (cmake/gpu-check sets it)
endif()
set(gpu_dir ${TREX_TESTS_DIR}/cuda/gpu)
# The CPU optimizer (the optimizer checks' oracle): trex_train in the full build; in the standalone cmake/gpu-check
# build, which has no model/ or dist/, src/train/optimizer.cpp alone (it needs only nn/ and util/).
if(TARGET trex_train)
  set(trex_cpu_optimizer trex_train)
else()
  add_library(trex_cpu_optimizer STATIC ${PROJECT_SOURCE_DIR}/src/train/optimizer.cpp)
  target_link_libraries(trex_cpu_optimizer PUBLIC trex_nn trex_util)
  if(TARGET trex_model)  # the optimizer's slots of a model (train_step.cpp) and the CPU device step (the GPU
    # train step's oracle; its ZeRO-1 shards from dist/zero_shards.cpp, which needs no MPI), for the GPU model's checks
    target_sources(trex_cpu_optimizer PRIVATE ${PROJECT_SOURCE_DIR}/src/train/train_step.cpp
                   ${PROJECT_SOURCE_DIR}/src/train/cpu_device_step.cpp ${PROJECT_SOURCE_DIR}/src/train/device_step.cpp
                   ${PROJECT_SOURCE_DIR}/src/dist/zero_shards.cpp)
    target_link_libraries(trex_cpu_optimizer PUBLIC trex_model)
  endif()
  target_include_directories(trex_cpu_optimizer PUBLIC ${PROJECT_SOURCE_DIR}/src)
  set(trex_cpu_optimizer trex_cpu_optimizer)
endif()
add_library(trex_cuda_op_check STATIC ${gpu_dir}/op_check.cpp ${gpu_dir}/op_cases.cpp ${gpu_dir}/optimizer_cases.cpp
            ${gpu_dir}/optimizer_ref.cpp ${gpu_dir}/sinkhorn_ref.cpp ${gpu_dir}/moe_route_cases.cpp
            ${gpu_dir}/experts_cases.cpp ${gpu_dir}/attention_cases.cpp ${gpu_dir}/compressor_cases.cpp
            ${gpu_dir}/indexer_cases.cpp ${gpu_dir}/hc_cases.cpp ${gpu_dir}/glue_cases.cpp)
target_link_libraries(trex_cuda_op_check PUBLIC trex_cuda_ops ${trex_cpu_optimizer} trex_nn trex_util)
target_include_directories(trex_cuda_op_check PUBLIC ${gpu_dir})

add_executable(trex_cuda_gpu_tests ${gpu_dir}/ops_test.cpp ${gpu_dir}/optimizer_test.cpp
               ${gpu_dir}/device_layer_test.cpp ${gpu_dir}/moe_route_test.cpp ${gpu_dir}/experts_test.cpp
               ${gpu_dir}/attention_test.cpp ${gpu_dir}/compressor_test.cpp ${gpu_dir}/indexer_test.cpp
               ${gpu_dir}/hc_test.cpp ${gpu_dir}/glue_test.cpp)
target_link_libraries(trex_cuda_gpu_tests PRIVATE trex_cuda_op_check trex_testing GTest::gtest GTest::gtest_main)
gtest_discover_tests(trex_cuda_gpu_tests
  DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu
             ENVIRONMENT_MODIFICATION "OPENBLAS_NUM_THREADS=set:1"
             TIMEOUT 180)  # a hung kernel fails its test; the gpu-check budget holds the rest

# The GPU model against the CPU model (model_parity.*): its gpu tests and the whole-step driver
# trex_cuda_model_perf (parity curves, the 1B bench; scripts/gpu-check.sh).
if(TARGET trex_cuda_model)
  add_library(trex_cuda_model_check STATIC ${gpu_dir}/model_parity.cpp)
  target_link_libraries(trex_cuda_model_check PUBLIC trex_cuda_model trex_cuda_op_check)
  target_include_directories(trex_cuda_model_check PUBLIC ${gpu_dir})
  target_sources(trex_cuda_gpu_tests PRIVATE ${gpu_dir}/model_test.cpp)
  target_link_libraries(trex_cuda_gpu_tests PRIVATE trex_cuda_model_check)
  add_executable(trex_cuda_model_perf ${gpu_dir}/model_perf.cpp)
  target_link_libraries(trex_cuda_model_perf PRIVATE trex_cuda_model_check)
  set_target_properties(trex_cuda_model_perf PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
endif()

add_executable(trex_cuda_op_perf ${gpu_dir}/op_perf.cpp)
target_link_libraries(trex_cuda_op_perf PRIVATE trex_cuda_op_check)
set_target_properties(trex_cuda_op_perf PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})

# The harness's comparisons are tested without a device, in the module's ordinary test binary.
if(TARGET trex_cuda_tests)  # (absent in the standalone cmake/gpu-check build)
  target_link_libraries(trex_cuda_tests PRIVATE trex_cuda_op_check)
  if(TARGET trex_cuda_model_check)  # the GPU model's host side (tests/cuda/gpu_model_test.cpp)
    target_link_libraries(trex_cuda_tests PRIVATE trex_cuda_model_check)
  endif()
endif()
