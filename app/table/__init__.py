"""The table: its model, commands, clock, projection, notifications and views (pure).

No I/O, no asyncio, no database: the pipeline (``app.service.pipeline``) passes in the time and
the seeds, the store (``app.store``) reads and writes these records.
"""
