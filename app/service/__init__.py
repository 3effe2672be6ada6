"""The service layer: the one command pipeline (``pipeline.TableService.submit``) and its read
side (``queries``), the workers that act through it (``workers``), the notifications' delivery
(``delivery``), and the services over the store that the api and the pipeline share (rate limits,
tokens, socket tickets, names, records, ratings)."""
