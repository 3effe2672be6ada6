"""The WebSocket stack: a table's live stream and a player's notifications (docs/protocol.md)."""
