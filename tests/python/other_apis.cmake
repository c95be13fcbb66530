# Other modelling APIs (issue #25 point 4), included from tests/CMakeLists.txt after TREX_PY_ENV and the
# reference_env fixture are defined.
# coptpy oracle: the ORLM-style coptpy programs and every 25th B4O reference program rewritten to coptpy run through
# the real coptpy 8.0.7 of the reference environment and through trex's coptpy layer, which must agree
# (tests/python/test_coptpy_oracle.py). The full sweep is bench/coptpy_oracle.bench.sh.
add_test(NAME python_coptpy_oracle
  COMMAND /usr/bin/python3 -m unittest discover -s ${CMAKE_CURRENT_SOURCE_DIR}/python -p "test_coptpy_oracle.py")
set_tests_properties(python_coptpy_oracle PROPERTIES
  ENVIRONMENT "${TREX_PY_ENV};TREX_REFERENCE_PYTHON=${TREX_REFERENCE_PYTHON}"
  FIXTURES_REQUIRED reference_env TIMEOUT 300 FAIL_REGULAR_EXPRESSION "Ran 0 tests")
# PuLP on Debian's python3-pulp: python/trex_pulp points PULP_CBC_CMD and the default solver at /usr/bin/cbc.
add_test(NAME python_pulp_cbc
  COMMAND /usr/bin/python3 -m unittest discover -s ${CMAKE_CURRENT_SOURCE_DIR}/python -p "test_pulp_cbc.py")
set_tests_properties(python_pulp_cbc PROPERTIES ENVIRONMENT "${TREX_PY_ENV}" TIMEOUT 120
                     FAIL_REGULAR_EXPRESSION "Ran 0 tests")
# `trex eval --executor gurobipy --python <reference env>`: coptpy answers on the real coptpy, PuLP on Debian's PuLP.
add_test(NAME python_eval_real_apis
  COMMAND /usr/bin/python3 -m unittest discover -s ${CMAKE_CURRENT_SOURCE_DIR}/python -p "test_eval_real_apis.py")
set_tests_properties(python_eval_real_apis PROPERTIES
  ENVIRONMENT "${TREX_PY_ENV};TREX_REFERENCE_PYTHON=${TREX_REFERENCE_PYTHON}"
  FIXTURES_REQUIRED reference_env TIMEOUT 300 FAIL_REGULAR_EXPRESSION "Ran 0 tests")
