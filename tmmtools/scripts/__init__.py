"""Repository chores in Python: the unit/integration split of the Swift tests (test_tags, make
test-fast), the udev tests' sysfs tree (make_sysfs), the Swift line-length rule (line_length, make
check-format)."""
