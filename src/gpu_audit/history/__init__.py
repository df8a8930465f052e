"""Audit history: fingerprints, the SQLite store, the comparison with the previous audit."""
