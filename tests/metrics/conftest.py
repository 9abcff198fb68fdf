"""The worker tests' ``trees`` fixture (real ``tacocat worker`` process trees), shared here."""

from tests.worker.conftest import trees

__all__ = ["trees"]
