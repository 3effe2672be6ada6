"""One module per resource: players, tables, moves, health."""
