# Tokenizer parity with the reference encoder (included from tests/CMakeLists.txt). The fixture test
# runs npm at test time into the build folder (nothing large is committed); the parity binary
# (tests/text/reference/*.cpp) requires it, so ctest orders them and fails both loudly if npm fails.
set(TREX_TOKENIZER_REFERENCE_DIR ${CMAKE_CURRENT_BINARY_DIR}/tokenizer_reference)
add_test(NAME text_tokenizer_reference_setup
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/reference/tokenizer/setup.sh ${TREX_TOKENIZER_REFERENCE_DIR}
                 $<TARGET_FILE:trex>)
set_tests_properties(text_tokenizer_reference_setup PROPERTIES FIXTURES_SETUP text_tokenizer_reference TIMEOUT 600)
file(GLOB text_reference_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/text/reference/*.cpp)
add_executable(trex_text_reference_tests ${text_reference_srcs})
target_link_libraries(trex_text_reference_tests PRIVATE trex_testing trex_text GTest::gtest GTest::gtest_main)
add_dependencies(trex_text_reference_tests trex)
gtest_discover_tests(trex_text_reference_tests
  DISCOVERY_TIMEOUT 60
  PROPERTIES FIXTURES_REQUIRED text_tokenizer_reference
             ENVIRONMENT "TREX_TOKENIZER_REFERENCE_DIR=${TREX_TOKENIZER_REFERENCE_DIR}"
             TIMEOUT 300)
