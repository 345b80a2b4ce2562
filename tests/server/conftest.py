from tests.server.helpers import spec, workspace  # noqa: F401  (fixtures)
