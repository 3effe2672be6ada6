"""The one error of a version-guarded write."""


class VersionConflictError(Exception):
    """The table changed since it was loaded; nothing was written."""
