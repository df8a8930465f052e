"""Job-config parsers: one module per format, each mapping a config to `Resource(kind=job)`."""
