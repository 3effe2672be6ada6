"""The bus: the in-process hub, Redis between processes, and the message form they carry."""
