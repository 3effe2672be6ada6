"""Request and response bodies, by resource, with the examples the OpenAPI document shows."""
