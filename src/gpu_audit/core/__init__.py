"""What every stage shares: the resource, its fields, results, fingerprints, savings, redaction."""
