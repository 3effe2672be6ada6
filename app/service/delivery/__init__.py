"""Delivery: the notification channels, the players' preferences, webhooks, Web Push and egress."""
