"""Repository chores in Python: the unit/integration split of the Swift tests (test_tags, make
test-fast), the udev tests' sysfs tree (make_sysfs), the selection of gpsd's regression suite
(gpsd_suite, scripts/fetch-gpsd-suite.sh), the Python steps of scripts/package-test.sh
(package_test), the Swift line-length rule (line_length, make check-format)."""
