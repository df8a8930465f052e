"""Sources of live capacity: one module per provider, plus saved inventories."""
