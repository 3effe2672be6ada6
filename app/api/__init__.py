"""Transport: pydantic schemas, routes, dependencies and the one error mapping."""
