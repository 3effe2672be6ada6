"""HTTP: the routes, their dependencies, their schemas and the mapping of errors to statuses."""
