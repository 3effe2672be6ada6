"""The outer ASGI layer: what every request and socket meets before the routes."""
