"""Organisation scale: shard reports stamped, read back, checked against each other and merged."""
