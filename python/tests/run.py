"""Runs the client's tests as ctest does (tests/unit/python_client): pytest over this folder,
writing nothing into the source tree; exit 77 (ctest: skipped) where pytest is not installed
(`make test-deps` installs Debian's python3-pytest)."""
import os
import sys

try:
    import pytest
except ImportError:
    print("pytest is not installed for %s (Debian: python3-pytest)" % sys.executable)
    sys.exit(77)

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", here] + sys.argv[1:]))
