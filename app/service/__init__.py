"""The service layer: the one command pipeline (``TableService.submit``) and the publish hub."""
