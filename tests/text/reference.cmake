# Tokenizer parity with Hugging Face tokenizers (included from tests/CMakeLists.txt). The fixture test writes the
# expected ids at test time into the build folder with the reference environment's python (nothing large is
# committed; the real tokenizer files are read from TREX_TOKENIZERS); the parity binary (tests/text/reference/*.cpp)
# requires it, so ctest orders them and reports the parity tests as not run, naming the fixture, if it fails.
set(TREX_TOKENIZERS "${PROJECT_SOURCE_DIR}/../shared/tokenizers" CACHE PATH "Folder of the real tokenizer.json files")
set(TREX_TOKENIZER_REFERENCE_DIR ${CMAKE_CURRENT_BINARY_DIR}/tokenizer_reference)
add_test(NAME text_tokenizer_reference_setup
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/reference/tokenizer/setup.sh ${TREX_TOKENIZER_REFERENCE_DIR}
                 $<TARGET_FILE:trex> ${TREX_REFERENCE_PYTHON} ${TREX_TOKENIZERS})
set_tests_properties(text_tokenizer_reference_setup PROPERTIES FIXTURES_SETUP text_tokenizer_reference
                     FIXTURES_REQUIRED reference_env TIMEOUT 600)
file(GLOB text_reference_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/text/reference/*.cpp)
add_executable(trex_text_reference_tests ${text_reference_srcs})
target_link_libraries(trex_text_reference_tests PRIVATE trex_testing trex_text GTest::gtest GTest::gtest_main)
# (compiled in: gtest_discover_tests splits a second ENVIRONMENT entry off into a property name)
target_compile_definitions(trex_text_reference_tests PRIVATE TREX_TOKENIZERS_DEFAULT="${TREX_TOKENIZERS}")
add_dependencies(trex_text_reference_tests trex)
gtest_discover_tests(trex_text_reference_tests
  DISCOVERY_TIMEOUT 60
  PROPERTIES FIXTURES_REQUIRED text_tokenizer_reference
             ENVIRONMENT "TREX_TOKENIZER_REFERENCE_DIR=${TREX_TOKENIZER_REFERENCE_DIR}"
             TIMEOUT 300)
