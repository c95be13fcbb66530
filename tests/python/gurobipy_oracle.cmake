# gurobipy oracle (issue #21 point 3), included from tests/CMakeLists.txt after TREX_PY_ENV and the reference_env
# fixture are defined: a committed subset of programs (B4O reference programs, the layer's own test programs, one
# `trex synth` code answer per family x variant) runs through the real gurobipy of the reference environment and
# through trex's layer, which must agree (tests/python/test_gurobipy_oracle.py; ~11 s with the general-constraint
# programs of issue #25). The full sweep is
# bench/gurobipy_oracle.bench.sh.
add_test(NAME python_gurobipy_oracle
  COMMAND /usr/bin/python3 -m unittest discover -s ${CMAKE_CURRENT_SOURCE_DIR}/python -p "test_gurobipy_oracle.py")
set_tests_properties(python_gurobipy_oracle PROPERTIES
  ENVIRONMENT "${TREX_PY_ENV};TREX_REFERENCE_PYTHON=${TREX_REFERENCE_PYTHON}"
  FIXTURES_REQUIRED reference_env TIMEOUT 300 FAIL_REGULAR_EXPRESSION "Ran 0 tests")
