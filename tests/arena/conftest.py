"""Arena test fixtures live in ``tests/conftest.py`` (``redis_url``, ``redis``,
``valkey_factory``), shared with the server, worker, web and CLI tests. Re-exported here for
modules that import them from this one."""

from tests.conftest import ValkeyFactory, redis_client, redis_url, valkey_factory

__all__ = ["ValkeyFactory", "redis_client", "redis_url", "valkey_factory"]
